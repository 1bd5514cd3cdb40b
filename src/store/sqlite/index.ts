/**
 * The embedded store: one SQLite file in WAL mode through better-sqlite3, composed of one
 * module per concern (see src/store/types.ts).
 *
 * Durability: `synchronous=FULL` (default) syncs the WAL at every commit, so a committed
 * enqueue survives a power cut; `NORMAL` syncs only at checkpoints: faster, and a power cut
 * (not a process crash) may lose the last transactions, which then come back from their
 * origin because their checkpoint rolled back with them. See docs/store.md. `syncOffThread`
 * keeps FULL's guarantee with the sync off the event loop (./wal-sync.ts).
 */
import { wrapStoreError } from '../common.js';
import { composeStore } from '../compose.js';
import type { Store } from '../types.js';
import { sqliteConcerns } from './concerns.js';
import { busyTimeoutOf, isBusy, isFull, isUnavailable, openDatabase, type SqliteOptions } from './db.js';
import { migrateSqlite } from './migrations.js';
import { WalSync } from './wal-sync.js';
import { SqliteWriter } from './writer.js';

export { DEFAULT_SQLITE_BUSY_TIMEOUT_MS, SQLITE_PAGE_SIZE, type SqliteOptions } from './db.js';

/** Opens (creating parent directories) and migrates. */
export async function openSqliteStore(path: string, options: SqliteOptions = {}): Promise<Store> {
  const db = openDatabase(path, options);
  try {
    migrateSqlite(db);
  } catch (err) {
    db.close();
    throw wrapStoreError(err, isUnavailable, `opening ${path}`);
  }
  const now = options.now ?? Date.now;
  const synchronous = options.synchronous ?? 'FULL';
  const offThread = options.syncOffThread === true && synchronous === 'FULL' && !db.memory;
  const wal = new WalSync(db, offThread, options.syncFile);
  const own = sqliteConcerns(db, now, synchronous, wal);
  const writer =
    options.writerThread === true && !db.memory
      ? new SqliteWriter(
          {
            path: db.name,
            options: {
              synchronous,
              busyTimeoutMs: busyTimeoutOf(options),
              ...(options.maxPageCount === undefined ? {} : { maxPageCount: options.maxPageCount }),
            },
          },
          options.now,
        )
      : undefined;
  const concerns = writer === undefined ? own : writer.route(own);
  const lifecycle = {
    migrate: () => migrateSqlite(db),
    close: async () => {
      await writer?.close();
      await wal.close();
      if (db.open) db.close();
    },
  };
  return composeStore('sqlite', concerns, lifecycle, {
    unavailable: isUnavailable,
    full: isFull,
    busy: { is: isBusy, budgetMs: busyTimeoutOf(options) },
  });
}
