/** Opening the SQLite file: pragmas, page size, and which driver failures mean "unavailable". */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { GatewayError } from '../../errors.js';
import { parseLimit } from '../../limits.js';

export interface SqliteOptions {
  /** `FULL` (default): every commit survives a power cut. `NORMAL`: faster; see ./index.ts. */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * Under `FULL`: the commits of enqueue, claim and markDelivered answer only once durable, as
   * always, but the WAL sync they wait for runs on the thread pool rather than on the thread that
   * commits (./wal-sync.ts). For a process whose event loop is its bottleneck and whose callers
   * each wait for many messages (`mailgate import`). Default false.
   */
  syncOffThread?: boolean;
  /** Internal, for tests: how `syncOffThread` syncs the -wal file (default `fs.fdatasync`). */
  syncFile?: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;
  /**
   * Internal, for tests: called each time a checkpoint round of `syncOffThread` falls back to
   * checkpointing and truncating the WAL on the event loop, syncs included (./wal-rounds.ts).
   */
  onWalTruncate?: () => void;
  /** How long a write waits for another connection's lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * The clock every stored time comes from (enqueue, claim and lease expiry, retry due
   * times, leases), in ms since the epoch; default `Date.now`. Tests inject a fake one.
   */
  now?: () => number;
  /**
   * A ceiling on the database file, in pages (SQLite `max_page_count`): a write that would grow
   * it further fails with SQLITE_FULL, as on a full disk. Default: SQLite's own (no practical limit).
   */
  maxPageCount?: number;
}

export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5_000;

/**
 * How long one statement may wait for another connection's lock on the calling thread. The rest
 * of the busy timeout is spent between attempts without holding the thread (the store's guard,
 * `BackendFailures.busy`): a lock held by a backup, a `compact` or another process then delays
 * the calls that need it, not every timer, request and health check of the process.
 */
export const SQLITE_BUSY_SLICE_MS = 20;

/** Another connection holds the lock: worth asking again until the busy timeout is spent. */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** The busy timeout of a store's options (validated once). */
export function busyTimeoutOf(options: SqliteOptions): number {
  return parseLimit('SQLite busyTimeoutMs', options.busyTimeoutMs, DEFAULT_SQLITE_BUSY_TIMEOUT_MS, { min: 0 });
}

const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|READONLY|NOTADB|CORRUPT|PERM|AUTH)/;

export function isUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNAVAILABLE.test(code)) return true;
  return err instanceof TypeError && /database connection is not open/.test(err.message);
}

/** A write that failed for want of space: the disk, or the file's `max_page_count`. */
export function isFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_FULL') || code === 'ENOSPC');
}

/** Size the -wal file is cut back to when it starts over (`journal_size_limit`), in bytes. */
export const WAL_KEEP_BYTES = 16 * 1024 * 1024;

/** Page size of a new database, in bytes. */
export const SQLITE_PAGE_SIZE = 8_192;

export function openDatabase(path: string, options: SqliteOptions): Database.Database {
  const busy = busyTimeoutOf(options);
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    db.pragma(`busy_timeout = ${Math.min(busy, SQLITE_BUSY_SLICE_MS)}`);
    // A new database gets 8 KiB pages. Every commit writes each page it changed whole, and a
    // message changes one page at a random place in each index keyed by its sender, subject,
    // Message-ID, comment id and thread: at 16 KiB a commit of 8 messages wrote about 200 KiB
    // a message (WAL and checkpoint), at 8 KiB about 140, and the CPU dropped with it
    // (`bench:store-writes`). Smaller pages would halve it again but cost large commits of
    // fresh stores (an import) more, as their documents and raw bytes then spill into overflow
    // pages. An existing database keeps its page size (it is fixed once written).
    db.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
    // A new database gives the pages of deleted rows back to the file system when asked
    // (retention runs `incremental_vacuum` after pruning). An existing one keeps its mode until
    // converted once with VACUUM (`mailgate store compact`, docs/store.md), so the mode is set
    // only on a new one: setting it takes the write lock, and an open beside a process in the
    // middle of a commit (`mailgate status` beside `mailgate serve`) failed as "locked".
    // SQLite takes the mode when the statement is compiled, and writes the new file's first page
    // with it at its first write, here the switch to WAL below. Run, the statement would write
    // that page in a transaction of its own, synced (four syncs, in the rollback journal the file
    // still has), before the switch syncs it again: compiling it is enough
    // (test/store/sqlite.test.ts checks the mode of a new store).
    if (db.pragma('page_count', { simple: true }) === 0) db.prepare('PRAGMA auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    // The -wal file is cut back to WAL_KEEP_BYTES whenever a write starts it over after a
    // checkpoint copied all of it: a burst (an import, a retention round's vacuum) may grow it,
    // and without a limit it would keep that size for good (docs/store.md "Retention").
    db.pragma(`journal_size_limit = ${WAL_KEEP_BYTES}`);
    db.pragma('foreign_keys = ON');
    // Statement journals in memory: every write inside a transaction first copies the pages it
    // changes to one, and past 64 KiB (four 16 KiB pages) SQLite spills it to a temporary file,
    // so an enqueue wrote several times its own size through extra system calls. A statement
    // journal lasts one statement; the store has no temporary tables. (`store compact` opens
    // the file on its own, so VACUUM still builds its copy on disk.)
    db.pragma('temp_store = MEMORY');
    if (options.maxPageCount !== undefined) {
      db.pragma(`max_page_count = ${parseLimit('SQLite max_page_count', options.maxPageCount, 1, { min: 1 })}`);
    }
    return db;
  } catch (err) {
    throw new GatewayError('MAILGATE_ERR_STORE_UNAVAILABLE', `cannot open SQLite store ${path}: ${(err as Error).message}`, { cause: err });
  }
}
