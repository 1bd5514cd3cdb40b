/**
 * Two Exchange journal reports of one message, imported from a journal mailbox's mbox into a
 * route with `unwrap: exchange_journal`, against the emulator over HTTP: one comment, billed
 * once, whose envelope properties hold the union of both reports.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { FIRST_REPORT, SECOND_REPORT } from '../support/journal-report.js';
import { mailgate } from './cli-io.js';

let dir: string;
let emu: StartedEmulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-journal-'));
  emu = await startEmulator({ autoCreateSources: true });
});
afterAll(async () => {
  await emu.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('journal reports imported', () => {
  it('are one comment, billed once, with the union of their recipients', async () => {
    const mbox = join(dir, 'journal.mbox');
    const entry = (report: Buffer) =>
      Buffer.concat([Buffer.from('From MAILER-DAEMON Tue Jun  4 10:00:05 2024\n'), report, Buffer.from('\n')]);
    writeFileSync(mbox, Buffer.concat([entry(FIRST_REPORT), entry(SECOND_REPORT)]));
    const config = join(dir, 'mailgate.yaml');
    writeFileSync(
      config,
      [
        'routes:',
        '  - name: journal',
        '    source: acme/journal',
        '    unwrap: exchange_journal',
        '    user_properties:',
        '      "string:Envelope Bcc": "{envelope.journal.bcc}"',
        '      "string:Envelope Recipients": "{envelope.to}"',
        '',
      ].join('\n'),
    );
    const before = emu.emulator.stats().ai_units;
    const run = await mailgate(
      'import',
      mbox,
      '--config',
      config,
      '--api-url',
      emu.url,
      '--token',
      emu.token,
      '--store',
      `sqlite:${join(dir, 'j.db')}`,
      '--workers',
      '1',
      '--json',
      '--yes',
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ read: 2, queued: 2, deadLettered: 0 });
    expect(emu.emulator.stats().ai_units - before).toBe(1);
    const res = await fetch(`${emu.url}/api/v1/sources/acme/journal/comments/${Buffer.from('<budget-2025@contoso.com>').toString('hex')}`, {
      headers: { authorization: `Bearer ${emu.token}` },
    });
    const body = (await res.json()) as { comment: { user_properties: Record<string, string> } };
    expect(body.comment.user_properties['string:Envelope Bcc']).toBe('dave@contoso.com');
    expect(body.comment.user_properties['string:Envelope Recipients']!.split(',').sort()).toEqual(
      ['bob@contoso.com', 'carol@contoso.com', 'dave@contoso.com', 'erin@contoso.com', 'frank@contoso.com', 'gina@fabrikam.com'].sort(),
    );
  });
});
