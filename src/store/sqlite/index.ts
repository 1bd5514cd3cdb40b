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
import { SqliteCheckpoints } from './checkpoints.js';
import { SqliteConsole } from './console.js';
import { SqliteControls } from './controls.js';
import { SqliteCounters } from './counters.js';
import { busyTimeoutOf, isBusy, isFull, isUnavailable, openDatabase, type SqliteOptions } from './db.js';
import { SqliteDeadLetters } from './dead-letters.js';
import { SqliteKeyed } from './keyed.js';
import { SqliteLeases } from './leases.js';
import { LightWrites } from './light.js';
import { SqliteMaintenance } from './maintenance.js';
import { SqliteLedger } from './ledger.js';
import { migrateSqlite } from './migrations.js';
import { SqliteOutbox } from './outbox.js';
import { SqliteOwners } from './owners.js';
import { SqlitePredictions } from './predictions.js';
import { SqliteThreads } from './threads.js';
import { WalSync } from './wal-sync.js';

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
  const leases = new SqliteLeases(db, now);
  const light = new LightWrites(db, synchronous);
  const parts = {
    leases,
    checkpoints: new SqliteCheckpoints(db, now, leases),
    counters: new SqliteCounters(db, now),
    threads: new SqliteThreads(db, light),
    ledger: new SqliteLedger(db),
    console: new SqliteConsole(db, now, light),
    controls: new SqliteControls(db, now, light),
  };
  const offThread = options.syncOffThread === true && synchronous === 'FULL' && !db.memory;
  const wal = new WalSync(db, offThread, options.syncFile, options.onWalTruncate);
  const outbox = new SqliteOutbox(db, now, parts, wal);
  const concerns = {
    ...parts,
    outbox,
    keyed: new SqliteKeyed(db, outbox, now, wal, parts.controls),
    owners: new SqliteOwners(db, now, leases),
    deadLetters: new SqliteDeadLetters(db, outbox, now),
    predictions: new SqlitePredictions(db, now),
    maintenance: new SqliteMaintenance(db, parts.console, parts.threads, light, wal),
  };
  const lifecycle = {
    migrate: () => migrateSqlite(db),
    close: async () => {
      await wal.close();
      parts.controls.close();
      if (db.open) db.close();
    },
  };
  return composeStore('sqlite', concerns, lifecycle, {
    unavailable: isUnavailable,
    full: isFull,
    busy: { is: isBusy, budgetMs: busyTimeoutOf(options) },
  });
}
