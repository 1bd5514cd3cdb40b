/**
 * Commits whose wait for the disk happens off the event loop.
 *
 * better-sqlite3 runs a statement on the calling thread, and with `synchronous=FULL` every commit
 * syncs the WAL there: the thread that answers SMTP clients and webhooks stood still for each
 * fsync. `deferred` commits with `synchronous=NORMAL` (the commit writes the WAL, no sync) and
 * then syncs the WAL file from Node's thread pool; the caller's promise resolves once that sync
 * is done, so an answer given after it still means "durable". Syncs asked while one runs share
 * the next one. Data written is visible to other readers of the store before it is synced, as
 * with `synchronous=NORMAL`; nothing acknowledges it before.
 * A later synced commit syncs them too, as the WAL is written in order.
 */
import { open } from 'node:fs/promises';
import type Database from 'better-sqlite3';

/** `synchronous=FULL` as `PRAGMA synchronous` answers it. */
const FULL = 2;

export class WalSync {
  private level: number | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly db: Database.Database) {}

  /** True when commits sync (FULL) and there is a WAL file to sync: only then is there anything to defer. */
  private syncs(): boolean {
    if (this.db.memory || this.db.inTransaction) return false;
    this.level ??= this.db.pragma('synchronous', { simple: true }) as number;
    return this.level >= FULL;
  }

  private withoutSync<T>(work: () => T): T {
    this.db.pragma('synchronous = NORMAL');
    try {
      return work();
    } finally {
      this.db.pragma(`synchronous = ${this.level}`);
    }
  }

  /** Runs `work` (a whole transaction); resolves with its answer once the WAL holding it is synced. */
  async deferred<T>(work: () => T): Promise<T> {
    if (!this.syncs()) return work();
    const result = this.withoutSync(work);
    await this.sync();
    return result;
  }

  /** A sync of the WAL that starts after this call. */
  private sync(): Promise<void> {
    if (this.running === undefined) return this.start();
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.start();
      });
    return this.queued;
  }

  private start(): Promise<void> {
    const run = syncFile(`${this.db.name}-wal`).finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }
}

/** fdatasync of the file through a descriptor of its own: a sync covers every write to the file, whoever made it. */
async function syncFile(path: string): Promise<void> {
  const file = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    // No WAL file: the last connection checkpointed it into the database (synced) and removed it.
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (file === undefined) return;
  try {
    await file.datasync();
  } finally {
    await file.close();
  }
}
