/**
 * Light writes: transactions whose commit does not sync the WAL (synchronous=NORMAL for them
 * alone, safe in WAL mode), for writes that a power cut may take back without harm because the
 * next run redoes them — a parse-attempt count (a message gets one more attempt), a retention
 * batch (its rows are deleted again next round), a fold of search rows (the rows wait again,
 * since each fold moves and removes them in one transaction). Under the store's FULL level every
 * commit syncs the WAL on the thread that commits, which with better-sqlite3 is the event loop:
 * an fdatasync (milliseconds on a real disk) per batch, while intake and delivery wait. The
 * operating system's page cache keeps a light write safe from a process crash, and the store's
 * next synced commit (or checkpoint) syncs its pages too.
 */
import type Database from 'better-sqlite3';

export class LightWrites {
  private readonly level: { normal: Database.Statement; full: Database.Statement } | undefined;

  constructor(
    private readonly db: Database.Database,
    /** The store's own level: a NORMAL store (or one in memory) syncs nothing at a commit already. */
    synchronous: 'FULL' | 'NORMAL',
  ) {
    if (synchronous !== 'FULL' || db.memory) return;
    this.level = { normal: db.prepare('PRAGMA synchronous = NORMAL'), full: db.prepare('PRAGMA synchronous = FULL') };
    // SQLite applies this pragma when the statement is compiled: the first run of a prepared one
    // only marks it to be compiled again, every later run applies it (./wal-sync.ts). Run once
    // here, so that the first light write is light too.
    this.level.normal.run();
    this.level.full.run();
  }

  /**
   * Runs `tx` as one IMMEDIATE transaction that does not sync the WAL at its commit; inside a
   * transaction of the caller's, as its savepoint (whose commit is the caller's).
   */
  run<A extends unknown[], T>(tx: Database.Transaction<(...args: A) => T>, ...args: A): T {
    if (this.db.inTransaction) return tx(...args);
    if (this.level === undefined) return tx.immediate(...args);
    this.level.normal.run();
    try {
      return tx.immediate(...args);
    } finally {
      this.level.full.run();
    }
  }
}
