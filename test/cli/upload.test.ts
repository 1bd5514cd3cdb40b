/**
 * `mailgate upload` against a running `mailgate serve`: one .eml (message/rfc822), one mbox
 * (application/mbox, sniffed), several files (multipart, a corrupt .msg among them reported per
 * message), an Outlook PST streamed from disk, Idempotency-Key, a wrong key, and `--wait` until
 * the messages are delivered.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENRON_PST } from '../files/support/pst.js';
import { killLeftovers } from '../service/serve-process.js';
import { runMailgate } from './support/dist.js';
import { message, startPushServe, UPLOAD_KEY, type PushServe } from './support/push-serve.js';

let s: PushServe;
let seq = 0;

beforeAll(async () => {
  s = await startPushServe();
}, 120_000);

afterAll(async () => {
  s.serve.child.kill('SIGTERM');
  await s.serve.exit;
  killLeftovers();
  rmSync(s.dir, { recursive: true, force: true });
});

function file(name: string, text: string): string {
  const path = join(s.dir, `${seq++}-${name}`);
  writeFileSync(path, text);
  return path;
}
const eml = () => file('m.eml', message(seq));
const mbox = (n: number) =>
  file(
    'box',
    Array.from(
      { length: n },
      (_, i) => `From c${i}@example.com Mon Mar  4 09:00:00 2024\n${message(1000 + seq * 10 + i).replace(/\r\n/g, '\n')}\n`,
    ).join(''),
  );

const upload = (files: string[], ...args: string[]) => runMailgate(['upload', ...files, '--url', s.url, '--key', UPLOAD_KEY, ...args]);

interface Out {
  results: Array<{ id: string; duplicate: boolean; file?: string; index?: number; dead?: { code: string } }>;
  states?: Array<{ id: string; state: string }>;
  done?: boolean;
}

describe('mailgate upload', () => {
  it('one .eml: stored, its id printed; --wait follows it until delivered', async () => {
    const before = await s.enqueued();
    const run = await upload([eml()], '--wait', '--wait-timeout-s', '120');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [result, state] = run.stdout.trim().split('\n');
    expect(result).toMatch(/^\d+\.[\w-]{22}\t-\tstored$/);
    expect(state).toBe(`${result!.split('\t')[0]}\tdelivered`);
    expect(await s.enqueued()).toBe(before + 1);
  });

  it('an mbox is sent as application/mbox: one id per message', async () => {
    const run = await upload([mbox(3)], '--json');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Out;
    expect(out.results.map((r) => r.index)).toEqual([0, 1, 2]);
    expect(new Set(out.results.map((r) => r.id)).size).toBe(3);
  });

  it('several files go as multipart: per-file results, a corrupt .msg as a dead message and exit 1', async () => {
    const corrupt = file('corrupt.msg', `not an Outlook file ${seq}`);
    const run = await upload([eml(), mbox(2), corrupt], '--json');
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as Out;
    expect(out.results).toHaveLength(4);
    expect(out.results[0]).toMatchObject({ duplicate: false, file: expect.stringMatching(/m\.eml$/) });
    expect(out.results.slice(1, 3).map((r) => r.index)).toEqual([0, 1]);
    expect(out.results[3]).toMatchObject({
      file: expect.stringMatching(/corrupt\.msg$/),
      dead: { code: 'MAILGATE_ERR_INPUT_MSG_INVALID' },
    });
    // A single .msg goes as a multipart file too (there is no media type of its own to send it as).
    const text = await upload([file('corrupt.msg', `still not an Outlook file ${seq}`)]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^\d+\.[\w-]{22}\t\d+-corrupt\.msg\tdead\tMAILGATE_ERR_INPUT_MSG_INVALID: /);
  });

  it('an Outlook PST goes as application/vnd.ms-outlook-pst, read from disk: one id per message of the archive', async () => {
    const before = await s.enqueued();
    const run = await upload([ENRON_PST], '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Out;
    // Sent as a message it would be one dead or one stored item; the archive holds 71 messages.
    expect(out.results).toHaveLength(71);
    expect(out.results.every((r) => r.dead === undefined)).toBe(true);
    expect(await s.enqueued()).toBe(before + 71);
  });

  it('the same Idempotency-Key and content answers the same ids and stores nothing twice', async () => {
    const path = eml();
    const key = `key-${seq}`;
    const first = JSON.parse((await upload([path], '--idempotency-key', key, '--json')).stdout) as Out;
    const before = await s.enqueued();
    const again = JSON.parse((await upload([path], '--idempotency-key', key, '--json')).stdout) as Out;
    expect(again.results.map((r) => r.id)).toEqual(first.results.map((r) => r.id));
    expect(await s.enqueued()).toBe(before);
    const plain = await upload([path]);
    expect(plain.stdout).toBe(`${first.results[0]!.id}\t-\tduplicate\n`);
  });

  it('a wrong key: the coded refusal and exit 1, nothing stored', async () => {
    const before = await s.enqueued();
    const run = await runMailgate(['upload', eml(), '--url', s.url, '--key', 'not-the-key-0123456789']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('upload refused with HTTP 401: MAILGATE_ERR_UPLOAD_UNAUTHORIZED: ');
    expect(await s.enqueued()).toBe(before);
  });

  it("an unknown endpoint name is the server's 404", async () => {
    const run = await upload([eml()], '--name', 'nope');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/upload refused with HTTP 404/);
  });
});
