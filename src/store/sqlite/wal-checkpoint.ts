/**
 * Checkpoints off the event loop, beside `syncOffThread` (./wal-sync.ts). By default SQLite
 * checkpoints inside the commit that takes the WAL past 1,000 pages: on the committing thread it
 * syncs the WAL, copies the pages into the database file and syncs that (for an import of 10,000
 * messages, about nine times, each a pause of the event loop). Here the connection's automatic
 * checkpoints are off and a worker thread with a connection of its own runs PASSIVE checkpoints:
 * they never wait for, nor block, this connection's writes, and SQLite restarts the WAL at the
 * next write once one has copied everything. What a checkpoint copies is synced on both sides as
 * before, so nothing about durability changes. Should the worker fail, this connection
 * checkpoints by itself again.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** Least time between the starts of two checkpoints while commits keep coming, in ms. */
const CHECKPOINT_EVERY_MS = 250;

/** SQLite's own automatic checkpoint threshold, in pages, restored when the worker fails. */
const AUTOCHECKPOINT_PAGES = 1_000;

/** The worker: CommonJS run from this string, the driver loaded from the path this module resolves. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyMs);
parentPort.on('message', (m) => {
  if (m === 'close') { db.close(); parentPort.close(); return; }
  try { db.pragma('wal_checkpoint(PASSIVE)'); parentPort.postMessage(true); }
  catch { parentPort.postMessage(false); }
});
`;

export class WalCheckpointer {
  private worker: Worker | undefined;
  private running = false;
  private dirty = false;
  private lastStart = 0;
  private timer: NodeJS.Timeout | undefined;
  private exited: Promise<void> | undefined;

  constructor(
    private readonly db: Database.Database,
    busyMs: number,
  ) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER, { eval: true, workerData: { driver, path: db.name, busyMs } });
    this.worker = worker;
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    db.pragma('wal_autocheckpoint = 0');
    worker.on('message', (ok: boolean) => {
      this.running = false;
      if (ok) this.schedule();
      else this.fallBack();
    });
    worker.on('error', () => this.fallBack());
    worker.on('exit', () => this.fallBack());
  }

  /** After a commit: a checkpoint runs soon (one at a time, at most one start per CHECKPOINT_EVERY_MS). */
  wrote(): void {
    this.dirty = true;
    this.schedule();
  }

  private schedule(): void {
    if (!this.dirty || this.running || this.timer !== undefined || this.worker === undefined) return;
    const wait = this.lastStart + CHECKPOINT_EVERY_MS - Date.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.schedule();
      }, wait);
      this.timer.unref();
      return;
    }
    this.dirty = false;
    this.running = true;
    this.lastStart = Date.now();
    this.worker.postMessage('run');
  }

  /** The worker cannot checkpoint: this connection does it again as SQLite does by default. */
  private fallBack(): void {
    const worker = this.worker;
    if (worker === undefined) return;
    this.worker = undefined;
    clearTimeout(this.timer);
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    void worker.terminate();
  }

  /** Stops the worker after the checkpoint it runs (before this connection closes). */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) worker.postMessage('close');
    await this.exited;
  }
}
