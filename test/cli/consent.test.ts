/**
 * `import` billed at once: nothing asked first. Now it shows the estimate from what it read and
 * stored (messages, AI units, what the ledger says is already billed) and asks on a terminal
 * before its first billable request; off a terminal it needs --yes. `dlq purge --all` asks too.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeMbox } from '../crash/support.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { ROOT } from './support/dist.js';

const PROGRAM = pathToFileURL(join(ROOT, 'dist/src/cli/program.js')).href;

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

/** Runs mailgate in-process; with `answer`, stdin and stderr are a terminal and `answer` is typed. */
async function mailgate(args: string[], answer?: string): Promise<{ code: number; stderr: string; stdout: string }> {
  const stdout = new Capture();
  const stderr = Object.assign(new Capture(), answer === undefined ? {} : { isTTY: true, columns: 200 });
  const stdin = Object.assign(new PassThrough(), { isTTY: answer !== undefined });
  if (answer !== undefined) stdin.end(`${answer}\n`);
  const { runCli } = (await import(PROGRAM)) as typeof import('../../src/cli/program.js');
  const code = await runCli(['node', 'mailgate', ...args], { stdout, stderr, stdin });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

let dir: string;
let emu: StartedEmulator;
const syncRequests = () => Object.values(emu.emulator.stats().requests['sync-raw-emails'] ?? {}).reduce((a, b) => a + b, 0);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-consent-'));
  emu = await startEmulator({ autoCreateSources: true });
});
afterAll(async () => {
  await emu.stop();
});

function importArgs(db: string, source: string, mbox: string): string[] {
  return [
    'import',
    mbox,
    '--api-url',
    emu.url,
    '--token',
    emu.token,
    '--source',
    source,
    '--store',
    `sqlite:${join(dir, db)}`,
    '--workers',
    '1',
  ];
}

describe('consent before billing', () => {
  it('off a terminal, import without --yes refuses before reading or storing anything', async () => {
    const mbox = join(dir, 'off.mbox');
    writeMbox(mbox, 5, 'off');
    const before = syncRequests();
    await expect(mailgate(importArgs('off.db', 'acme/off', mbox))).rejects.toMatchObject({ code: 'MAILGATE_ERR_CLI_CONSENT_REQUIRED' });
    expect(existsSync(join(dir, 'off.db'))).toBe(false);
    expect(syncRequests()).toBe(before);
  });

  it('on a terminal it shows the estimate of what it stored and sends nothing on "no"; "yes" delivers without parsing again', async () => {
    const mbox = join(dir, 'ask.mbox');
    writeMbox(mbox, 12, 'ask');
    const units = emu.emulator.stats().ai_units;
    const requests = syncRequests();
    const no = await mailgate(importArgs('ask.db', 'acme/ask', mbox), 'n');
    expect(no.code).toBe(1);
    expect(no.stderr).toContain('12 messages read and waiting in the store for route import (acme/ask)');
    expect(no.stderr).toContain('sending 12 costs about 12 AI units; this route has spent 0 AI units so far');
    expect(no.stderr).toContain('send them? [y/N]');
    expect(no.stderr).toContain('nothing sent');
    expect(syncRequests()).toBe(requests);

    const yes = await mailgate([...importArgs('ask.db', 'acme/ask', mbox), '--json'], 'y');
    expect(yes.code, yes.stderr).toBe(0);
    // The second run reads nothing new (the checkpoint is past it): the estimate comes from the store.
    expect(JSON.parse(yes.stdout)).toMatchObject({ read: 0, delivered: 12, aiUnits: 12 });
    expect(yes.stderr).toContain('12 messages read and waiting in the store');
    expect(emu.emulator.stats().ai_units - units).toBe(12);

    // Nothing billable left: no question at all.
    const again = await mailgate([...importArgs('ask.db', 'acme/ask', mbox), '--json'], '');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('[y/N]');
  });

  it('the estimate counts what the ledger says is already billed as unchanged', async () => {
    const mbox = join(dir, 'ledger.mbox');
    writeMbox(mbox, 6, 'ledger');
    const first = await mailgate([...importArgs('ledger-a.db', 'acme/ledger', mbox), '--yes']);
    expect(first.code, first.stderr).toBe(0);
    const other = join(dir, 'ledger-more.mbox');
    writeMbox(other, 9, 'ledger');
    const run = await mailgate(importArgs('ledger-a.db', 'acme/ledger', other), 'n');
    expect(run.stderr).toContain('9 messages read and waiting in the store');
    expect(run.stderr).toContain('sending 3 costs about 3 AI units; 6 unchanged');
    expect(run.stderr).toContain('this route has spent 6 AI units so far');
  });

  it('dlq purge --all asks on a terminal and needs --yes off one', async () => {
    const store = ['--store', `sqlite:${join(dir, 'ask.db')}`];
    await expect(mailgate(['dlq', 'purge', '--all', ...store])).rejects.toMatchObject({ code: 'MAILGATE_ERR_CLI_CONSENT_REQUIRED' });
    const yes = await mailgate(['dlq', 'purge', '--all', '--yes', ...store]);
    expect(yes.code).toBe(0);
    expect(yes.stdout).toBe('purged 0 dead letter(s)\n');
  });
});
