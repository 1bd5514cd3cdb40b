/**
 * The WAL checkpoints of a SQLite store whose commits sync off the event loop (`syncOffThread`,
 * what `mailgate import` opens): rounds that sync the -wal file, copy its pages into the database
 * file without a sync, then sync the database file, all through the store's sync function (here
 * a recording one, that can also hold or fail a sync), before the WAL may restart. A WAL never
 * restarted (the rounds' pin held, or a round started while commits keep coming) would grow with
 * every commit; a database file synced on the event loop would never reach the sync function.
 */
import { fdatasync, fstatSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { ROUND_WAL_BYTES } from '../../src/store/sqlite/wal-rounds.js';
import type { Store } from '../../src/store/types.js';
import { input } from '../contract/store.case.js';

type Done = (err: NodeJS.ErrnoException | null) => void;

/** Which file each sync was for, in order; a database-file sync can be held or failed. */
class Syncs {
  readonly files: Array<'wal' | 'db' | 'other'> = [];
  hold = false;
  fail = false;
  readonly held: Array<() => void> = [];
  constructor(private readonly path: string) {}
  sync = (fd: number, done: Done): void => {
    const ino = fstatSync(fd).ino;
    const file = ino === statSync(this.path).ino ? 'db' : ino === statSync(`${this.path}-wal`).ino ? 'wal' : 'other';
    this.files.push(file);
    const eio = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', errno: -5 });
    if (file === 'db' && this.fail) return void setImmediate(() => done(eio));
    if (file === 'db' && this.hold) return void this.held.push(() => fdatasync(fd, done));
    fdatasync(fd, done);
  };
  get dbSyncs(): number {
    return this.files.filter((f) => f === 'db').length;
  }
}

/** A batch of 100 items of about 20 KiB each (document and raw bytes): about 2 MB of WAL. */
let next = 0;
const batch = () =>
  Array.from({ length: 100 }, () => {
    const n = (next += 1);
    return input('r', n, { raw: Buffer.alloc(10_000, 97 + (n % 26)), json: { document: JSON.stringify({ pad: 'x'.repeat(10_000), n }) } });
  });

const walSize = (path: string): number => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let path: string;
let store: Store;
let syncs: Syncs;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-wal-rounds-'));
  path = join(dir, 's.db');
  syncs = new Syncs(path);
  store = await openStore(`sqlite:${path}`, { sqlite: { syncOffThread: true, syncFile: syncs.sync } });
});
afterEach(async () => {
  syncs.held.splice(0).forEach((run) => run());
  await store.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite checkpoint rounds off the event loop', () => {
  it('syncs the database file through the thread pool, after the WAL, and restarts the WAL after each round', async () => {
    let walPeak = 0;
    for (let i = 0; i < 40; i++) {
      await store.enqueue(batch());
      walPeak = Math.max(walPeak, walSize(path));
    }
    // 80 MB written: about ten rounds, each one sync of the database file preceded by one of the WAL.
    expect(syncs.dbSyncs).toBeGreaterThanOrEqual(5);
    syncs.files.forEach((f, i) => f === 'db' && expect(syncs.files[i - 1]).toBe('wal'));
    // Restarted after each round: the file holds a round's worth of frames and a commit, not the run.
    expect(walPeak).toBeLessThan(3 * ROUND_WAL_BYTES);
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect((db.prepare('SELECT count(*) AS n FROM outbox_docs').get() as { n: number }).n).toBe(4_000);
    db.close();
  });

  it('holds a commit while a round waits for the disk, and answers it once the database file is synced', async () => {
    syncs.hold = true;
    // Batches until a round holds: the batch under way then waits for it too.
    const held = async () => {
      while (syncs.held.length === 0) await tick(5);
    };
    while (syncs.held.length === 0) await Promise.race([store.enqueue(batch()), held()]);
    const waiting = store.enqueue(batch());
    await tick(100);
    expect(await Promise.race([waiting.then(() => 'stored'), tick(0).then(() => 'waiting')])).toBe('waiting');
    syncs.hold = false;
    syncs.held.splice(0).forEach((run) => run());
    expect((await waiting).queued).toBe(100);
  });

  it('checkpoints a WAL grown by writes that are not durable commits, without waiting for one', async () => {
    // Checkpoint rows are written without a sync of their own: 12 of about 1 MB each.
    for (let i = 0; i < 12; i++) await store.setCheckpoint(`big:${i}`, { pad: 'x'.repeat(1_000_000) });
    for (let i = 0; i < 300 && syncs.dbSyncs === 0; i++) await tick(50);
    expect(syncs.dbSyncs).toBeGreaterThanOrEqual(1);
    // Once that sync has returned, the round is over, having copied it all: the next write starts the WAL over.
    await tick(500);
    await store.setCheckpoint('small', { n: 1 });
    const other = new Database(path);
    const frames = (other.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]!.log;
    other.close();
    expect(frames).toBeLessThan(100);
  });

  it('fails every later commit once a sync of the database file failed', async () => {
    syncs.fail = true;
    let failed: unknown;
    for (let i = 0; i < 20 && failed === undefined; i++)
      failed = await store.enqueue(batch()).then(
        () => undefined,
        (e: unknown) => e,
      );
    // The round that failed is answered by the next commit, and every one after it.
    failed ??= await store.enqueue(batch()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(failed)).toMatch(/EIO/);
    await expect(store.enqueue(batch())).rejects.toThrow(/EIO/);
  });
});
