/**
 * A SQLite store over months: retention gives space back (incremental auto-vacuum), a store made
 * before that converts once (`compact`), a full file (max_page_count: SQLITE_FULL, as a full disk
 * answers) refuses writes whole and recovers by itself, and a backup taken while writing opens
 * consistent and carries on.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { backupSqlite, compactSqlite } from '../../src/store/sqlite/backup.js';
import { SQLITE_PAGE_SIZE, WAL_KEEP_BYTES } from '../../src/store/sqlite/db.js';
import { RECLAIM_STEP_PAGES } from '../../src/store/sqlite/maintenance.js';
import type { Store } from '../../src/store/types.js';
import { expectCode, input } from '../contract/store.case.js';

const dir = mkdtempSync(join(tmpdir(), 'mailgate-sqlite-space-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = (): string => join(dir, `store-${(n += 1)}.db`);
const fileBytes = (p: string): number => statSync(p).size + (statSync(`${p}-wal`, { throwIfNoEntry: false })?.size ?? 0);

/** `count` items from `from`, each with `rawBytes` of raw bytes and a body of the same size. */
function big(route: string, from: number, count: number, rawBytes = 20_000) {
  return Array.from({ length: count }, (_, i) => {
    const base = input(route, from + i);
    const filler = 'x'.repeat(rawBytes);
    return {
      ...base,
      raw: Buffer.alloc(rawBytes, 0x61),
      document: { ...base.document, raw_email: { ...base.document.raw_email, body: { plain: filler } } },
    };
  });
}

async function deliverAll(s: Store): Promise<void> {
  for (;;) {
    const items = await s.claim('r', 500, 'w', 60_000);
    if (items.length === 0) return;
    await s.markDelivered(
      items.map((i) => i.id),
      { outcome: 'delivered' },
    );
  }
}

describe('SQLite space over months', () => {
  it('gives the space of pruned items back to the file system (incremental auto-vacuum)', async () => {
    const path = freshPath();
    const s = await openStore(`sqlite:${path}`);
    expect((await s.storeStats()).autoVacuum).toBe('incremental');
    for (let i = 0; i < 10; i += 1) await s.enqueue(big('r', i * 50, 50));
    await deliverAll(s);
    const full = fileBytes(path);
    let pruned = 0;
    for (;;) {
      const n = await s.pruneBatch('delivered', new Date(Date.now() + 60_000), 100);
      pruned += n;
      if (n < 100) break;
    }
    expect(pruned).toBe(500);
    expect((await s.storeStats()).freeBytes).toBeGreaterThan(5_000_000);
    const released = await s.reclaimSpace(1 << 30);
    expect(released).toBeGreaterThan(5_000_000);
    expect((await s.storeStats()).freeBytes).toBe(0);
    await s.close();
    expect(fileBytes(path)).toBeLessThan(full / 4);
  });

  it('gives space back without holding the event loop: short vacuum steps, the checkpoint on a thread of its own, the WAL cut back after', async () => {
    const path = freshPath();
    const s = await openStore(`sqlite:${path}`);
    // About 20 MB pruned, and as much queued after it: the vacuum moves those pages into the
    // free space, which grows the WAL past WAL_KEEP_BYTES.
    for (let i = 0; i < 20; i += 1) await s.enqueue(big('r', i * 50, 50));
    await deliverAll(s);
    for (let i = 0; i < 20; i += 1) await s.enqueue(big('q', i * 50, 50));
    while ((await s.pruneBatch('delivered', new Date(Date.now() + 60_000), 500)) === 500);
    const free = (await s.storeStats()).freeBytes!;
    const steps = Math.floor(free / (RECLAIM_STEP_PAGES * SQLITE_PAGE_SIZE));
    expect(steps).toBeGreaterThan(4);
    const dbBefore = statSync(path).size;
    // Turns of the event loop while space is given back: one whole synchronous call gives none.
    let turns = 0;
    let reclaiming = true;
    const count = (): void => {
      turns += 1;
      if (reclaiming) setImmediate(count);
    };
    setImmediate(count);
    const released = await s.reclaimSpace(1 << 30);
    reclaiming = false;
    expect(released).toBe(free);
    expect(turns).toBeGreaterThanOrEqual(steps);
    // The checkpoint copied every frame back (no reader held it): the database file shrank while
    // the store stays open, though this connection checkpointed nothing itself.
    expect(statSync(path).size).toBeLessThan(dbBefore - free / 2);
    // The WAL the steps grew is cut back to WAL_KEEP_BYTES by the next write, which starts it over.
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(WAL_KEEP_BYTES);
    await s.enqueue([input('r', 9_999)]);
    expect(statSync(`${path}-wal`).size).toBeLessThanOrEqual(WAL_KEEP_BYTES);
    await s.close();
  });

  it('cuts a -wal file grown by a large commit back to WAL_KEEP_BYTES when it starts over', async () => {
    const path = freshPath();
    const s = await openStore(`sqlite:${path}`);
    // One commit of about 24 MB: the WAL file grows past the limit, and the commit's checkpoint copies it all.
    await s.enqueue(big('r', 0, 600));
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(WAL_KEEP_BYTES);
    await s.enqueue([input('r', 9_999)]);
    expect(statSync(`${path}-wal`).size).toBeLessThanOrEqual(WAL_KEEP_BYTES);
    await s.close();
  });

  it('converts a store made without auto-vacuum once, keeping everything in it', async () => {
    const path = freshPath();
    const db = new Database(path);
    db.pragma('auto_vacuum = NONE');
    db.exec('CREATE TABLE made_before (x)');
    db.close();
    const s = await openStore(`sqlite:${path}`);
    expect((await s.storeStats()).autoVacuum).toBe('none');
    await s.enqueue(big('r', 0, 200));
    await deliverAll(s);
    await s.enqueue([input('r', 999)]);
    while ((await s.pruneBatch('delivered', new Date(Date.now() + 60_000), 500)) === 500);
    // Without incremental auto-vacuum the space stays in the file.
    expect(await s.reclaimSpace(1 << 30)).toBe(0);
    await s.close();
    const before = fileBytes(path);
    const r = compactSqlite(path);
    expect(r.before).toBe(before);
    expect(r.after).toBeLessThan(before / 4);
    const again = await openStore(`sqlite:${path}`);
    expect((await again.storeStats()).autoVacuum).toBe('incremental');
    expect(await again.outboxDepth('r')).toBe(1);
    await again.close();
  });

  it('refuses a write whole when the file is full, reports it, and recovers once retention makes room', async () => {
    const path = freshPath();
    const s = await openStore(`sqlite:${path}?max_page_count=200`);
    await s.enqueue(big('r', 0, 40, 10_000), { key: 'files:/m', value: { at: 40 } });
    await deliverAll(s);
    // Fill it to the brim.
    let at = 40;
    let failure: unknown;
    while (failure === undefined) {
      await s.enqueue(big('r', at, 10, 10_000), { key: 'files:/m', value: { at: at + 10 } }).then(
        () => (at += 10),
        (err: unknown) => (failure = err),
      );
    }
    expect((failure as { code?: string }).code).toBe('MAILGATE_ERR_STORE_UNAVAILABLE');
    expect(String((failure as Error).message)).toMatch(/full/i);
    expect(s.health().full?.method).toBe('enqueue');
    // Nothing of the refused batch: not its items, not its checkpoint.
    expect(await s.getCheckpoint('files:/m')).toEqual({ at });
    expect(await s.knownKeys('r', [input('r', at).key])).toEqual(new Set());
    // A delivery result is written whole or not at all: one with many ledger entries cannot fit.
    const queued = await s.outboxDepth('r');
    expect(queued).toBeGreaterThan(0);
    // One item: delivering it frees its raw bytes, far less than the ledger entries need.
    const claimed = await s.claim('r', 1, 'w', 60_000);
    const ids = claimed.map((i) => i.id);
    const entries = Array.from({ length: 3_000 }, (_, k) => ({
      commentId: `${claimed[k % claimed.length]!.commentId}-${k}-${'f'.repeat(200)}`,
      textHash: `t${k}`,
      docHash: 'd',
      outcome: 'delivered' as const,
      updatedAt: 'x',
    }));
    const result = { outcome: 'delivered' as const, aiUnits: { route: 'r', units: ids.length }, ledger: [{ source: 'acme/x', entries }] };
    await expectCode(s.markDelivered(ids, result), 'MAILGATE_ERR_STORE_UNAVAILABLE');
    expect(s.health().full?.method).toBeDefined();
    expect(await s.outboxDepth('r')).toBe(queued);
    expect((await s.lookup('acme/x', [entries[0]!.commentId])).size).toBe(0);
    expect((await s.counters()).find((c) => c.route === 'r')?.aiUnits).toBe(0);
    expect(await s.itemAttempts(ids[0]!)).toEqual([]);
    // Retention still runs on a full store (deleting needs no new pages) and makes room.
    expect(await s.pruneBatch('delivered', new Date(Date.now() + 60_000), 500)).toBeGreaterThan(0);
    await s.enqueue(big('r', at, 10, 10_000), { key: 'files:/m', value: { at: at + 10 } });
    expect(await s.getCheckpoint('files:/m')).toEqual({ at: at + 10 });
    await s.markDelivered(ids, { ...result, ledger: [{ source: 'acme/x', entries: entries.slice(0, 10) }] });
    expect(await s.outboxDepth('r')).toBe(queued - 1 + 10);
    expect(s.health()).toEqual({});
    await s.close();
  });

  it('a space probe is refused while the file is full and clears "full" for every method once space returns, with nothing left behind', async () => {
    const path = freshPath();
    const s = await openStore(`sqlite:${path}?max_page_count=120`);
    let at = 0;
    // One item at a time, so what is left is less than one item (about 20 kB) and less than the probe.
    for (let failed = false; !failed; at += 1) {
      await s.enqueue(big('r', at, 1, 10_000)).catch(() => (failed = true));
    }
    expect(s.health().full?.method).toBe('enqueue');
    await expectCode(s.probeSpace(64 * 1024), 'MAILGATE_ERR_STORE_UNAVAILABLE');
    expect(s.health().full?.method).toBe('enqueue');
    // Space returns without any write of the failed kind: the probe alone clears it.
    await deliverAll(s);
    expect(await s.pruneBatch('delivered', new Date(Date.now() + 60_000), 500)).toBeGreaterThan(0);
    expect(s.health().full?.method).toBe('enqueue');
    await s.probeSpace(64 * 1024);
    expect(s.health()).toEqual({});
    expect((await s.listCheckpoints()).filter((c) => c.key.startsWith('space-probe:'))).toEqual([]);
    await expectCode(s.probeSpace(0), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
    await s.close();
  });

  it('backs up a store while it is written: the copy opens consistent and carries on', async () => {
    const path = freshPath();
    const s = await openStore(`sqlite:${path}`);
    await s.enqueue(big('r', 0, 200, 4_000), { key: 'files:/m', value: { at: 200 } });
    let writing = true;
    let written = 200;
    const writer = (async () => {
      while (writing) {
        await s.enqueue(big('r', written, 20, 4_000), { key: 'files:/m', value: { at: written + 20 } });
        written += 20;
        await new Promise((r) => setImmediate(r));
      }
    })();
    const copy = join(dir, 'backup-copy.db');
    const r = await backupSqlite(path, copy);
    writing = false;
    await writer;
    expect(r.pages).toBeGreaterThan(0);
    await expectCode(backupSqlite(path, copy), 'MAILGATE_ERR_STORE_WRITE_FAILED');
    const check = new Database(copy, { readonly: true });
    expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    check.close();
    // Consistent: the checkpoint names exactly the items the copy holds.
    const restored = await openStore(`sqlite:${copy}`);
    const at = (await restored.getCheckpoint('files:/m'))!['at'] as number;
    expect(await restored.outboxDepth('r')).toBe(at);
    // It carries on: more intake after the checkpoint, delivery of everything.
    await restored.enqueue(big('r', at, 20, 4_000), { key: 'files:/m', value: { at: at + 20 } });
    await deliverAll(restored);
    expect((await restored.outboxCounts()).find((c) => c.status === 'delivered')?.count).toBe(at + 20);
    await restored.close();
    await s.close();
  });
});
