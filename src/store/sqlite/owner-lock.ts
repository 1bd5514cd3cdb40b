/**
 * Whether the process that wrote a file beside a SQLite store is still running, told by a lock
 * it holds for as long as it runs rather than by its pid: on a small SQLite file of its own it
 * holds an exclusive lock (`locking_mode = EXCLUSIVE`), which the kernel lets go of when the
 * process ends, however it ends. Every process that opens the file sees that lock — one in
 * another PID namespace (another container sharing the store's folder) too, where `kill(pid, 0)`
 * answers for some other process or none. Locks on one file are shared by the connections of a
 * process (one SQLite library), so a process also sees a lock one of its own connections holds.
 */
import { unlinkSync } from 'node:fs';
import Database from 'better-sqlite3';

export class OwnerLock {
  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {}

  /** Creates the lock file `path` and holds its lock until `release`. */
  static hold(path: string): OwnerLock {
    const db = new Database(path);
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      // No rollback journal beside it and no sync (one cost 4–9 ms): the file is never written,
      // only locked.
      db.pragma('journal_mode = MEMORY');
      db.pragma('synchronous = OFF');
      db.exec('BEGIN EXCLUSIVE; COMMIT');
    } catch (err) {
      db.close();
      throw err;
    }
    return new OwnerLock(db, path);
  }

  /** Lets go of the lock and removes its file. */
  release(): void {
    this.db.close();
    try {
      unlinkSync(this.path);
    } catch {
      // Removed already.
    }
  }
}

/**
 * The state of the lock file `path`: `held` by a running process (or not to be judged: a file
 * this process cannot open), `free` (its process ended), or `absent`.
 */
export function lockState(path: string): 'held' | 'free' | 'absent' {
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: true, timeout: 0 });
  } catch (err) {
    return (err as { code?: unknown }).code === 'SQLITE_CANTOPEN' ? 'absent' : 'held';
  }
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return 'free';
  } catch {
    return 'held';
  } finally {
    db.close();
  }
}
