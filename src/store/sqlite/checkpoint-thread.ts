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

// CommonJS, run as given (`eval`): no module of mailgate's is loaded on the thread. The
// connection's synchronous level is the driver's WAL default (NORMAL), at which a checkpoint
// still syncs the WAL before it copies and the database file after.
const CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
try {
  parentPort.postMessage(db.pragma('wal_checkpoint(PASSIVE)')[0]);
} finally {
  db.close();
}
`;

/** Runs one PASSIVE checkpoint of the store file `path` on a thread of its own; answers what it did. */
export function checkpointOffThread(path: string): Promise<CheckpointResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(CODE, { eval: true, workerData: { driver: DRIVER, path } });
    let result: CheckpointResult | undefined;
    worker.once('message', (r: CheckpointResult) => (result = r));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (result !== undefined) resolve(result);
      else reject(new Error(`the checkpoint thread exited (code ${code}) without an answer`));
    });
  });
}
