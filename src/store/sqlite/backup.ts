/**
 * Copies and compaction of a SQLite store, for `mailgate backup` and `mailgate compact`.
 *
 * The backup is SQLite's online backup: it reads the store inside one read transaction (WAL
 * readers never block the gateway's writers, nor are blocked by them), so the copy is the store
 * as of one commit — every enqueue with its checkpoint, every delivery with its ledger entries,
 * or none of them. It is written beside the target and renamed into place once complete.
 */
import { renameSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { GatewayError } from '../../errors.js';
import { DEFAULT_SQLITE_BUSY_TIMEOUT_MS } from './db.js';

/** All remaining pages in one step: one read transaction, so no write can restart the copy. */
const ALL_PAGES = 0x7fffffff;

export interface BackupResult {
  /** Bytes of the copy. */
  bytes: number;
  pages: number;
  ms: number;
}

function open(path: string, readonly: boolean): Database.Database {
  try {
    const db = new Database(path, { readonly, fileMustExist: true });
    db.pragma(`busy_timeout = ${DEFAULT_SQLITE_BUSY_TIMEOUT_MS}`);
    return db;
  } catch (err) {
    throw new GatewayError('MAILGATE_ERR_STORE_UNAVAILABLE', `cannot open SQLite store ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** A consistent copy of the store at `source` in the file `target`, which must not exist yet. */
export async function backupSqlite(source: string, target: string): Promise<BackupResult> {
  if (statSync(target, { throwIfNoEntry: false }) !== undefined) {
    throw new GatewayError('MAILGATE_ERR_STORE_WRITE_FAILED', `${target} exists already: a backup never overwrites a file; name a new one`);
  }
  const started = Date.now();
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  const db = open(source, false);
  try {
    const r = await db.backup(partial, { progress: () => ALL_PAGES });
    // The copy is a store of its own: no WAL left beside it.
    const copy = new Database(partial);
    copy.pragma('wal_checkpoint(TRUNCATE)');
    copy.close();
    rmSync(`${partial}-wal`, { force: true });
    rmSync(`${partial}-shm`, { force: true });
    renameSync(partial, target);
    return { bytes: statSync(target).size, pages: r.totalPages, ms: Date.now() - started };
  } catch (err) {
    rmSync(partial, { force: true });
    if (err instanceof GatewayError) throw err;
    throw new GatewayError('MAILGATE_ERR_STORE_WRITE_FAILED', `backup of ${source} to ${target} failed: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    db.close();
  }
}

export interface CompactResult {
  before: number;
  after: number;
  ms: number;
  autoVacuum: 'incremental';
}

const size = (path: string): number =>
  (statSync(path, { throwIfNoEntry: false })?.size ?? 0) + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);

/**
 * Rewrites the store (VACUUM) with incremental auto-vacuum, once: afterwards retention gives
 * pruned space back by itself. Holds the write lock for the whole rewrite and needs free disk
 * of up to twice the store's size meanwhile (docs/store.md "Giving space back").
 */
export function compactSqlite(path: string): CompactResult {
  const started = Date.now();
  const before = size(path);
  const db = open(path, false);
  try {
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch (err) {
    throw new GatewayError(
      'MAILGATE_ERR_STORE_WRITE_FAILED',
      `compacting ${path} failed (the store is unchanged): ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  } finally {
    db.close();
  }
  return { before, after: size(path), ms: Date.now() - started, autoVacuum: 'incremental' };
}
