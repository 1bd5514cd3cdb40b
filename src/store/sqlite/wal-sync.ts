/**
 * Durable commits whose sync runs off the calling thread (`SqliteOptions.syncOffThread`).
 *
 * Under synchronous=FULL SQLite syncs the WAL inside every COMMIT, on the thread that commits:
 * with better-sqlite3 that is the event loop, held for the length of an fdatasync (several ms on
 * a real disk) while reading, parse hand-over and delivery wait. `durably` instead commits one
 * transaction without a sync (visible at once and safe from a process crash: the pages are in the
 * operating system's cache) and then runs one fdatasync of the -wal file on libuv's thread pool,
 * answering only once it has returned: the caller is told "durable" exactly when a FULL commit
 * would have told it, and a power cut before that takes back what it has not been told. Frames
 * are appended to the one file, so one fdatasync that starts after the commit covers it and every
 * commit before it.
 *
 * The transaction runs under synchronous=OFF rather than NORMAL: in WAL mode the two differ only
 * in the syncs NORMAL keeps, those of a checkpoint and of the WAL's header when the first commit
 * after a checkpoint restarts the file, and both are made elsewhere here, off the thread. The
 * checkpoints are this connection's own rounds (./wal-rounds.ts), which sync the WAL before
 * copying and the database file before the WAL can restart; a restarted header is written by the
 * commit that restarts it and synced with its frames, before that commit is answered or any
 * round copies them (a power cut in between finds an old header and new frames, which SQLite
 * ignores, over a database file that holds everything before them).
 *
 * A failed fdatasync is final: the kernel may have dropped the pages it could not write while the
 * rows stay visible to this process, so no later sync can vouch for them. Every later `durably`
 * fails too, writing nothing, until the store is opened again and reads what the disk really holds.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { type Levels, WalRounds } from './wal-rounds.js';

export type SyncFile = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

function levels(db: Database.Database): Levels {
  const level = { off: db.prepare('PRAGMA synchronous = OFF'), full: db.prepare('PRAGMA synchronous = FULL') };
  // SQLite applies this pragma when the statement is compiled: the first run of a prepared one
  // does nothing (it only marks it to be compiled again), every later run applies it. Run once
  // here, so that the first transaction is not written (and synced) under FULL.
  level.off.run();
  level.full.run();
  return level;
}

export class WalSync {
  private fd: number | undefined;
  private failed: Error | undefined;
  /** Syncs on the thread pool: the file stays open until they have answered. */
  private readonly running = new Set<Promise<void>>();
  private readonly level: Levels | undefined;
  private readonly rounds: WalRounds | undefined;
  /** Durable commits written so far (their transactions), and how many of them a returned sync covers. */
  private written = 0;
  private synced = 0;

  constructor(
    private readonly db: Database.Database,
    /** Whether commits sync off the calling thread: FULL store, on disk, asked for. */
    offThread: boolean,
    private readonly syncFile: SyncFile = fdatasync,
    onTruncate?: () => void,
  ) {
    this.level = offThread ? levels(db) : undefined;
    this.rounds =
      this.level &&
      new WalRounds(
        db,
        this.level,
        (fd) => this.syncFd(fd),
        () => this.walFd(),
        onTruncate,
      );
  }

  /**
   * Runs `tx` (one transaction) and answers its result once it is durable. Off the thread: the
   * commit under OFF, then an fdatasync on the thread pool (skipped when `wrote` says the
   * transaction wrote nothing). Otherwise at once, the commit having synced itself. While a
   * checkpoint round is under way, the transaction waits for it (without holding the thread).
   */
  durably<T>(tx: () => T, wrote: (result: T) => boolean = () => true): T | Promise<T> {
    return this.run(tx, (result) => {
      if (!wrote(result)) return false;
      this.written += 1;
      return true;
    });
  }

  /**
   * Runs `tx` (one transaction whose own writes need not survive a power cut: a claim, whose
   * loss only lets the items be claimed again) and answers its result once everything it read is
   * durable: at once when every durable commit made before it has been synced, otherwise after
   * one sync, which covers them. `read` says whether the result holds anything (a claim that
   * found nothing waits for no disk). Off the thread only; otherwise the commit synced itself.
   */
  afterDurable<T>(tx: () => T, read: (result: T) => boolean): T | Promise<T> {
    return this.run(tx, (result) => read(result) && this.synced < this.written);
  }

  /** `tx` under OFF (after the round under way), then a sync when `sync(result)` asks for one. */
  private run<T>(tx: () => T, sync: (result: T) => boolean): T | Promise<T> {
    const level = this.level;
    if (level === undefined) return tx();
    if (this.failed !== undefined) return Promise.reject(this.failed);
    const round = this.rounds?.underWay;
    if (round !== undefined) return round.then(() => this.run(tx, sync));
    level.off.run();
    let result: T;
    try {
      result = tx();
    } finally {
      level.full.run();
    }
    if (!sync(result)) return result;
    return this.sync().then(() => {
      this.rounds?.afterSync();
      return result;
    });
  }

  /**
   * Between the steps of a long write that is no durable commit: waits for a checkpoint round
   * when the WAL holds one's worth of frames (./wal-rounds.ts `between`); at once otherwise.
   */
  async between(): Promise<void> {
    await this.rounds?.between();
  }

  /** Resolves once every commit made before the call is on disk. */
  private sync(): Promise<void> {
    let fd: number;
    try {
      fd = this.walFd();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const covers = this.written;
    return this.syncFd(fd).then(() => {
      this.synced = Math.max(this.synced, covers);
    });
  }

  /**
   * The -wal file, opened once: it keeps its inode while this connection is open (SQLite removes
   * it only when the last connection closes, and restarts or truncates it in place).
   */
  private walFd(): number {
    return (this.fd ??= openSync(`${this.db.name}-wal`, 'r'));
  }

  /** One fdatasync of `fd` on the thread pool; the first failure fails this one and every later one. */
  private syncFd(fd: number): Promise<void> {
    if (this.failed !== undefined) return Promise.reject(this.failed);
    const done = new Promise<void>((resolve, reject) =>
      this.syncFile(fd, (err) => {
        this.running.delete(done);
        // Another sync failing meanwhile leaves this one unable to vouch either.
        if (err === null && this.failed === undefined) return resolve();
        this.failed ??= err ?? undefined;
        reject(this.failed);
      }),
    );
    this.running.add(done);
    return done;
  }

  /** Waits for the round and the syncs running, then closes the file (before the connection closes). */
  async close(): Promise<void> {
    await this.rounds?.finish();
    await Promise.allSettled([...this.running]);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
