/**
 * Giving space back (`reclaimSpace`, 1 MiB incremental-vacuum steps) in a store whose commits
 * sync off the event loop (`syncOffThread`, what `serve` reading mailboxes and `import` open):
 * the steps' frames used to pile up in the WAL while intake kept committing, past
 * ROUND_MAX_WAL_BYTES, and the next round then checkpointed and truncated the whole WAL on the
 * event loop, syncs included. Now the steps let a round run whenever the WAL holds a round's worth
 * of frames, so it stays within a round and a step, and no round falls back.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { RECLAIM_STEP_PAGES } from '../../src/store/sqlite/maintenance.js';
import { ROUND_MAX_WAL_BYTES, ROUND_WAL_BYTES } from '../../src/store/sqlite/wal-rounds.js';
import type { Store } from '../../src/store/types.js';
import { input } from '../contract/store.case.js';

/** Items of about 40 KiB (raw bytes and document): 100 a batch, about 4 MiB. */
let next = 0;
const batch = (n = 100) =>
  Array.from({ length: n }, () => {
    const k = (next += 1);
    return input('r', k, { raw: Buffer.alloc(20_000, 97 + (k % 26)), json: { document: JSON.stringify({ pad: 'y'.repeat(20_000), k }) } });
  });

/**
 * Frames in the WAL now: `mxFrame` of the wal-index header at the start of the -shm file (a 32-bit
 * count at byte 16, https://www.sqlite.org/walformat.html), what the rounds compare with their bounds.
 */
function walFrames(path: string): number {
  const header = readFileSync(`${path}-shm`).subarray(0, 20);
  return endianness() === 'LE' ? header.readUInt32LE(16) : header.readUInt32BE(16);
}

let dir: string;
let path: string;
let store: Store;
let truncations: number;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-reclaim-rounds-'));
  path = join(dir, 's.db');
  truncations = 0;
  store = await openStore(`sqlite:${path}`, { sqlite: { syncOffThread: true, onWalTruncate: () => (truncations += 1) } });
});
afterEach(async () => {
  await store.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite reclaimSpace in a store with checkpoint rounds', () => {
  it('lets a round run before the WAL passes ROUND_MAX_WAL_BYTES, while intake commits', async () => {
    // About 250 MiB of items, then every other one deleted (by another connection, as pruning
    // would): about 100 MiB of free pages between live ones, which the vacuum moves to fill them.
    for (let i = 0; i < 64; i++) await store.enqueue(batch());
    const other = new Database(path);
    for (const table of ['outbox_raw', 'outbox_docs']) other.prepare(`DELETE FROM ${table} WHERE id % 2 = 0`).run();
    const free = other.pragma('freelist_count', { simple: true }) as number;
    const pageSize = other.pragma('page_size', { simple: true }) as number;
    other.close();
    expect(free * pageSize).toBeGreaterThan(ROUND_MAX_WAL_BYTES);
    // The deletes' frames copied by a round, and the WAL started over by the next commit.
    for (let i = 0; i < 3 && walFrames(path) * pageSize >= ROUND_WAL_BYTES; i++) await store.enqueue(batch(1));
    expect(walFrames(path) * pageSize).toBeLessThan(ROUND_WAL_BYTES);
    truncations = 0;

    // Intake meanwhile: one small durable commit after another, each looking at the WAL after its sync.
    let reclaiming = true;
    let commits = 0;
    const intake = (async () => {
      while (reclaiming) {
        await store.enqueue(batch(1));
        commits += 1;
      }
    })();
    let walPeak = 0;
    const sampler = setInterval(() => (walPeak = Math.max(walPeak, walFrames(path) * pageSize)), 5);
    const released = await store.reclaimSpace(free * pageSize).finally(() => {
      reclaiming = false;
      clearInterval(sampler);
    });
    await intake;

    expect(released).toBeGreaterThan(ROUND_MAX_WAL_BYTES);
    expect(commits).toBeGreaterThan(0);
    expect(truncations).toBe(0);
    // The WAL holds at most a round's frames, a step's and intake's commits meanwhile.
    expect(walPeak).toBeLessThan(ROUND_WAL_BYTES + 8 * RECLAIM_STEP_PAGES * pageSize);
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  }, 120_000);
});
