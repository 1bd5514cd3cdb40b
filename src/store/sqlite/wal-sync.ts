/**
 * Durable commits whose sync runs off the calling thread (`SqliteOptions.syncOffThread`).
 *
 * Under synchronous=FULL SQLite syncs the WAL inside every COMMIT, on the thread that commits:
 * with better-sqlite3 that is the event loop, held for the length of an fdatasync (several ms on
 * a real disk) while reading, parse hand-over and delivery wait. `durably` instead commits one
 * transaction under synchronous=NORMAL (visible at once and safe from a process crash: the pages
 * are in the operating system's cache) and then runs one fdatasync of the -wal file on libuv's
 * thread pool, answering only once it has returned: the caller is told "durable" exactly when a
 * FULL commit would have told it, and a power cut before that takes back what it has not been
 * told. Frames are appended to the one file, and a checkpoint syncs the WAL before it copies
 * pages out of it (and the database file after), so one fdatasync that starts after the commit
 * covers it and every commit before it.
 *
 * A failed fdatasync is final: the kernel may have dropped the pages it could not write while the
 * rows stay visible to this process, so no later sync can vouch for them. Every later `durably`
 * fails too, writing nothing, until the store is opened again and reads what the disk really holds.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';
import type Database from 'better-sqlite3';

export class WalSync {
  private fd: number | undefined;
  private failed: Error | undefined;
  /** Syncs on the thread pool: the file stays open until they have answered. */
  private readonly running = new Set<Promise<void>>();
  private readonly level: { normal: Database.Statement; full: Database.Statement } | undefined;

  constructor(
    private readonly db: Database.Database,
    /** Whether commits sync off the calling thread: FULL store, on disk, asked for. */
    offThread: boolean,
    private readonly syncFile: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void = fdatasync,
  ) {
    this.level = offThread
      ? { normal: db.prepare('PRAGMA synchronous = NORMAL'), full: db.prepare('PRAGMA synchronous = FULL') }
      : undefined;
  }

  /**
   * Runs `tx` (one transaction) and answers its result once it is durable. Off the thread: the
   * commit under NORMAL, then an fdatasync on the thread pool (skipped when `wrote` says the
   * transaction wrote nothing). Otherwise at once, the commit having synced itself.
   */
  durably<T>(tx: () => T, wrote: (result: T) => boolean = () => true): T | Promise<T> {
    const level = this.level;
    if (level === undefined) return tx();
    if (this.failed !== undefined) return Promise.reject(this.failed);
    level.normal.run();
    let result: T;
    try {
      result = tx();
    } finally {
      level.full.run();
    }
    if (!wrote(result)) return result;
    return this.sync().then(() => result);
  }

  /** Resolves once every commit made before the call is on disk. */
  private sync(): Promise<void> {
    if (this.failed !== undefined) return Promise.reject(this.failed);
    let fd: number;
    try {
      // Opened once: the -wal file keeps its inode while this connection is open (SQLite removes
      // it only when the last connection closes, and restarts or truncates it in place).
      fd = this.fd ??= openSync(`${this.db.name}-wal`, 'r');
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const done = new Promise<void>((resolve, reject) =>
      this.syncFile(fd, (err) => {
        this.running.delete(done);
        // Another sync of the file failing meanwhile leaves this one unable to vouch either.
        if (err === null && this.failed === undefined) return resolve();
        this.failed ??= err ?? undefined;
        reject(this.failed);
      }),
    );
    this.running.add(done);
    return done;
  }

  /** Waits for the syncs running, then closes the file (before the connection closes). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.running]);
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}
