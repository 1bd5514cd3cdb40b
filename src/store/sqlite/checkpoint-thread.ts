/**
 * A WAL checkpoint of a SQLite store on a thread of its own, so that the copying of pages back
 * into the database file and its syncs never hold the event loop (retention ends each round with
 * one, docs/store.md "Retention"). The thread opens its own connection to the file, runs one
 * PASSIVE checkpoint — it takes no writer lock, so the process's own commits go on meanwhile and
 * nothing waits for it — and exits. A checkpoint that copies every frame also truncates the
 * database file to its size, which is how an incremental vacuum's pages reach the file system;
 * the WAL file itself is cut back by the store's `journal_size_limit` (db.ts) when the next write
 * starts it over.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** What SQLite answers for a checkpoint: busy (1: another checkpoint ran), frames in the WAL, frames copied. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

// The thread loads the same driver (one SQLite library in the process: its locks on the file
// are shared with the store's connection, as POSIX locks require).
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

// CommonJS, run as given (`eval`): no module of mailgate's is loaded on the thread. One connection
// for as long as the thread lives, answering each message with one PASSIVE checkpoint and
// closing when told to. Its synchronous level is OFF for a store's rounds (./wal-rounds.ts: the
// round syncs the WAL before it and the database file after it, on the thread pool), otherwise the
// driver's WAL default (NORMAL), at which a checkpoint syncs the WAL before it copies and the
// database file after.
const CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true, timeout: workerData.timeoutMs });
if (workerData.unsynced) db.pragma('synchronous = OFF');
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    parentPort.postMessage({ ok: true, result: passive.get() });
  } catch (err) {
    parentPort.postMessage({ ok: false, message: String(err && err.message), code: err && err.code });
  }
});
`;

/**
 * PASSIVE checkpoints of one store file, each on the same thread of its own with its own
 * connection: the copying of WAL pages into the database file leaves the event loop. At
 * synchronous=OFF (`unsynced`, a store's rounds) it syncs nothing; otherwise SQLite syncs as a
 * checkpoint does. One checkpoint at a time. The thread keeps the process alive only while a
 * checkpoint is under way.
 */
export class CheckpointThread {
  private readonly worker: Worker;
  private waiting: { resolve: (r: CheckpointResult) => void; reject: (e: Error) => void } | undefined;
  private dead: Error | undefined;

  constructor(path: string, unsynced = true) {
    this.worker = new Worker(CODE, {
      eval: true,
      // The rounds' connection gives way at once to a lock (the round runs again later); a
      // checkpoint of its own waits as long as the driver's default.
      workerData: { driver: DRIVER, path, unsynced, timeoutMs: unsynced ? 20 : 5000 },
      // It allocates next to nothing: V8's default young generation would only add resident memory.
      resourceLimits: { maxYoungGenerationSizeMb: 1 },
    });
    this.worker.unref();
    this.worker.on('message', (m: { ok: true; result: CheckpointResult } | { ok: false; message: string; code?: string }) => {
      const w = this.waiting;
      this.waiting = undefined;
      this.worker.unref();
      if (w === undefined) return;
      if (m.ok) w.resolve(m.result);
      else w.reject(Object.assign(new Error(m.message), m.code === undefined ? {} : { code: m.code }));
    });
    const gone = (err: Error) => {
      this.dead ??= err;
      this.waiting?.reject(this.dead);
      this.waiting = undefined;
    };
    this.worker.on('error', gone);
    this.worker.on('exit', (code) => gone(new Error(`the checkpoint thread exited (code ${code})`)));
  }

  /** Whether it can still checkpoint (its thread has not failed or ended). */
  get alive(): boolean {
    return this.dead === undefined;
  }

  /** One PASSIVE checkpoint on the thread, without syncs. */
  checkpoint(): Promise<CheckpointResult> {
    if (this.dead !== undefined) return Promise.reject(this.dead);
    if (this.waiting !== undefined) return Promise.reject(new Error('a checkpoint is under way on the thread'));
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.worker.ref();
      this.worker.postMessage('checkpoint');
    });
  }

  /** Closes its connection and ends the thread. */
  async close(): Promise<void> {
    if (this.dead !== undefined) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    // Held until it has ended: the caller's next step runs after the close, not never.
    this.worker.ref();
    this.worker.postMessage('close');
    await exited;
  }
}

/** Runs one PASSIVE checkpoint of the store file `path` on a thread of its own, syncs included; answers what it did. */
export async function checkpointOffThread(path: string): Promise<CheckpointResult> {
  const thread = new CheckpointThread(path, false);
  try {
    return await thread.checkpoint();
  } finally {
    await thread.close();
  }
}
