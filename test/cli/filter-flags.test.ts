/**
 * `preview` and `import` take a mailbox's participant and skip filters as flags, so an analyst
 * sees what a filter would keep before turning it on: what they leave out is never parsed nor
 * billed, and counted by reason.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMailgate } from './support/dist.js';

let dir: string;
const mail = (id: string, from: string, extra = '') =>
  `From: ${from}\r\nTo: team@corp.example\r\nSubject: ${id}\r\nMessage-ID: <${id}@flags.test>\r\n${extra}\r\nbody ${id}\r\n`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailgate-filter-flags-'));
  await writeFile(join(dir, 'a.eml'), mail('keep', 'client@client.example'));
  await writeFile(join(dir, 'b.eml'), mail('news', 'news@newsletter.example'));
  await writeFile(join(dir, 'c.eml'), mail('ooo', 'client@client.example', 'Auto-Submitted: auto-replied\r\n'));
  await writeFile(join(dir, 'd.eml'), mail('list', 'dev@lists.example', 'List-Id: <dev.lists.example>\r\n'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('filter flags', () => {
  it('preview shows only what the filter keeps and counts the rest by reason', async () => {
    const run = await runMailgate([
      'preview',
      dir,
      '--deny',
      '*@newsletter.example',
      '--skip',
      'auto_replies,mailing_lists',
      '--workers',
      '1',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const subjects = run.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { comment: { messages: Array<{ subject: { text: string } }> } }).comment.messages[0]!.subject.text);
    expect(subjects).toEqual(['keep']);
    expect(run.stderr).toContain('filtered 3 messages (');
    expect(run.stderr).toMatch(/participants 1/);
  });

  it('import --allow keeps only mail with an allowed participant; the rest is never stored nor billed', async () => {
    const store = `sqlite:${join(dir, 'import.db')}`;
    const run = await runMailgate([
      'import',
      dir,
      '--yes',
      '--json',
      '--store',
      store,
      '--source',
      'acme/flags',
      '--allow',
      'client.example',
      '--skip',
      'auto_replies',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as {
      read: number;
      delivered: number;
      aiUnits: number;
      filtered: number;
      filteredBy: Record<string, number>;
    };
    expect(summary).toMatchObject({ read: 1, delivered: 1, aiUnits: 1, filtered: 3, filteredBy: { participants: 2, auto_reply: 1 } });
    expect(run.stderr).toContain('filtered 3 messages');
  });

  it('refuses a rule that is no address, *@domain nor domain', async () => {
    const run = await runMailgate(['preview', dir, '--deny', '*@*']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('*@example.com or example.com');
  });
});
