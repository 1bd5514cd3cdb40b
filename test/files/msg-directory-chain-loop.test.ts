/**
 * Attack: a 1.5 KiB .msg whose directory sector chain points to itself. The Outlook reader
 * followed it until V8 ran out of heap and the process died, on every restart too. It must
 * become a dead letter with MAILGATE_ERR_INPUT_MSG_INVALID, and the run goes on.
 */
import { mkdtempSync, readFileSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMailgate, SAMPLES } from '../cli/support/dist.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { directoryChainLoopMsg } from './support/cfb-loop.js';

const SAMPLE = join(SAMPLES, 'hostile/directory-chain-loop.msg');
/** A small heap: without the fix the process dies within seconds instead of minutes. */
const env = { NODE_OPTIONS: '--max-old-space-size=256' };

let dir: string;
let emu: StartedEmulator;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-msg-loop-'));
  emu = await startEmulator({ autoCreateSources: true });
});
afterAll(async () => {
  await emu.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a .msg whose directory chain loops', () => {
  it('is the sample in samples/files/hostile, 1.5 KiB', () => {
    const bytes = directoryChainLoopMsg();
    expect(bytes.length).toBe(1536);
    expect(readFileSync(SAMPLE).equals(bytes)).toBe(true);
  });

  it('mailgate preview survives it: an error line, the next file still read, exit 1', async () => {
    const run = await runMailgate(['preview', '--format', 'jsonl', SAMPLE, join(SAMPLES, 'eml/01-hello.eml')], { env });
    expect(run.stderr).not.toMatch(/heap out of memory/);
    expect(run.code).toBe(1);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { error?: { code: string } });
    expect(lines.map((l) => l.error?.code ?? 'ok')).toEqual(['MAILGATE_ERR_INPUT_MSG_INVALID', 'ok']);
  });

  it('mailgate import survives it: a dead letter with the bytes, the other message delivered, exit 1', async () => {
    const inbox = join(dir, 'inbox');
    rmSync(inbox, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(inbox));
    copyFileSync(SAMPLE, join(inbox, 'a-loop.msg'));
    copyFileSync(join(SAMPLES, 'eml/01-hello.eml'), join(inbox, 'b-hello.eml'));
    const store = `sqlite:${join(dir, 'loop.db')}`;
    const args = ['--api-url', emu.url, '--token', emu.token, '--source', 'acme/loop', '--store', store, '--workers', '1', '--json'];
    const run = await runMailgate(['import', '--yes', inbox, ...args], { env });
    expect(run.stderr).not.toMatch(/heap out of memory/);
    expect(run.code, run.stderr).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ read: 2, unreadable: 1, deadLettered: 1, delivered: 1 });
    const dead = await runMailgate(['dlq', 'list', '--store', store, '--json']);
    expect((JSON.parse(dead.stdout) as Array<{ error: { code: string } }>).map((d) => d.error.code)).toEqual([
      'MAILGATE_ERR_INPUT_MSG_INVALID',
    ]);
  });
});
