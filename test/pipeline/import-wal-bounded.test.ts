/**
 * A long `mailgate import` into SQLite keeps its -wal file bounded. The WAL is restarted only
 * when a checkpoint has copied all of it and no reader holds an older snapshot; an earlier attempt
 * that checkpointed off the writing thread let it grow with every commit until the run ended (it
 * reached the size of the store), and so would any change that keeps a second connection reading
 * across the writer's checkpoints. Sampled all along the run: it must stay a fraction of the
 * store's size, however many messages the run writes.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuild } from '../cli/support/dist.js';
import { runCli, writeMbox } from '../crash/support.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';

/** Messages in the run: 32 commits of the import's 500, the store ends several times larger than the WAL's few commits. */
const MESSAGES = 16_000;

let dir: string;
let emu: StartedEmulator;

beforeAll(async () => {
  requireBuild();
  dir = mkdtempSync(join(tmpdir(), 'mailgate-import-wal-'));
  emu = await startEmulator({ autoCreateSources: true });
});
afterAll(async () => {
  await emu.stop();
  rmSync(dir, { recursive: true, force: true });
});

const sizeOf = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

describe('import WAL bound', () => {
  it('keeps the -wal file under half the store over a long import on SQLite', async () => {
    const mbox = join(dir, 'long.mbox');
    writeMbox(mbox, MESSAGES, 'wal');
    const db = join(dir, 'store.db');
    const args = ['import', '--yes', mbox, '--api-url', emu.url, '--token', emu.token, '--source', 'acme/wal', '--store', `sqlite:${db}`];
    const run = runCli([...args, '--json'], dir);
    let walPeak = 0;
    let samples = 0;
    const sampler = setInterval(() => {
      const wal = sizeOf(`${db}-wal`);
      if (wal > 0) samples++;
      walPeak = Math.max(walPeak, wal);
    }, 5);
    const done = await run.exited.finally(() => clearInterval(sampler));
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ read: MESSAGES, queued: MESSAGES, delivered: MESSAGES });
    // The sampler saw the WAL during the run (it is removed when the store closes).
    expect(samples).toBeGreaterThan(10);
    expect(walPeak).toBeGreaterThan(0);
    // A WAL that is never restarted holds every page the run wrote: at least the store's size.
    expect(walPeak).toBeLessThan(sizeOf(db) / 2);
  });
});
