/**
 * The SQLite writer thread's entry (./writer.ts): its own connection to the store's file and
 * the same concerns as the calling thread's (concerns.ts); each write runs its usual
 * transaction and commits here under the store's `synchronous` level, so that a call is
 * answered once it is durable.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { sqliteConcerns, type SqliteConcerns } from './concerns.js';
import { openSecondConnection } from './db.js';
import { WalSync } from './wal-sync.js';
import { fromWire, type WriterData, type WriterReply, type WriterRequest } from './writer-wire.js';

type Connected = SqliteConcerns & { db: Database.Database };

/** The thread's connection and concerns; `now` is the store's clock. */
function connect(data: WriterData, now: () => number): Connected {
  const db = openSecondConnection(data.path, data.options);
  return { ...sqliteConcerns(db, now, data.options.synchronous ?? 'FULL', new WalSync(db, false)), db };
}

/** An error as the calling thread rebuilds it (writer.ts), its code kept. */
function failure(id: number, err: unknown): WriterReply & { ok: false } {
  const e = err as Error & { code?: unknown };
  return { id, ok: false, name: e.name, message: e.message, ...(typeof e.code === 'string' ? { code: e.code } : {}) };
}

/** One request on the thread's connection. */
function run(concerns: Connected, req: WriterRequest): unknown {
  if (req.op === 'enqueue') return concerns.keyed.enqueue(fromWire(req), req.checkpoint, req.fence);
  if (req.concern === 'outbox' && req.method === 'claim') {
    const [route, limit, owner, leaseMs] = req.args as [string | undefined, number, string, number];
    return concerns.outbox.claimRows(route, limit, owner, leaseMs);
  }
  const impl = concerns[req.concern] as unknown as Record<string, (...args: unknown[]) => unknown>;
  return impl[req.method]!.apply(impl, req.args);
}

function serve(data: WriterData): void {
  // The store's clock: this thread's, or the reading the calling thread's own clock sent along.
  let sent = 0;
  const now = data.clock ? () => sent : Date.now;
  // Once set, every request is answered with it: the connection could not be opened, or the
  // disk failed a write or sync (final: the kernel may have dropped pages this connection still
  // sees, so no later commit can vouch for them, as in wal-sync.ts).
  let broken: (WriterReply & { ok: false }) | undefined;
  let concerns: Connected | undefined;
  try {
    concerns = connect(data, now);
  } catch (err) {
    broken = failure(0, err);
  }
  parentPort!.on('message', (req: WriterRequest | 'close') => {
    if (req === 'close') {
      concerns?.db.close();
      parentPort!.close();
      return;
    }
    if (broken !== undefined || concerns === undefined) return parentPort!.postMessage({ ...broken, id: req.id });
    sent = req.now ?? 0;
    let reply: WriterReply;
    try {
      reply = { id: req.id, ok: true, result: run(concerns, req) };
    } catch (err) {
      const failed = failure(req.id, err);
      if (failed.code?.startsWith('SQLITE_IOERR') === true) broken = failed;
      reply = failed;
    }
    parentPort!.postMessage(reply);
  });
}

if (!isMainThread && parentPort) serve(workerData as WriterData);
