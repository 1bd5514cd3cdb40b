/**
 * The scale-out store: PostgreSQL through a `pg` Pool, shared by any number of gateway
 * replicas, composed of one module per concern (see src/store/types.ts). Durability is PostgreSQL's own (fsync, synchronous_commit): a commit that
 * returned is on disk unless the server is configured otherwise.
 */
import pg from 'pg';
import { parseLimit } from '../../limits.js';
import { redactUrl } from '../../logger.js';
import { wrapStoreError } from '../common.js';
import { composeStore } from '../compose.js';
import type { Store } from '../types.js';
import { PgCheckpoints } from './checkpoints.js';
import { PgConsole } from './console.js';
import { PgControls } from './controls.js';
import { PgCounters } from './counters.js';
import { isPgFull, isPgUnavailable } from './db.js';
import { PgDeadLetters } from './dead-letters.js';
import { PgKeyed } from './keyed.js';
import { PgLeases } from './leases.js';
import { PgMaintenance } from './maintenance.js';
import { PgLedger } from './ledger.js';
import { migratePostgres } from './migrations.js';
import { PgOutbox } from './outbox.js';
import { PgOwners } from './owners.js';
import { PgPredictions } from './predictions.js';
import { PgThreads } from './threads.js';

export interface PostgresOptions {
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** How long to wait for a connection, in ms (default 10000; 0 waits forever, as in `pg`). */
  connectTimeoutMs?: number;
  /**
   * The clock leases, claims and retry due times are computed with, in ms since the epoch.
   * Default: the server's clock, one for every replica. Tests inject a fake one.
   */
  now?: () => number;
}

export const DEFAULT_PG_POOL_SIZE = 10;
export const DEFAULT_PG_CONNECT_TIMEOUT_MS = 10_000;

function poolFor(url: string, options: PostgresOptions): pg.Pool {
  const max = parseLimit('PostgreSQL poolSize', options.poolSize, DEFAULT_PG_POOL_SIZE);
  const timeout = parseLimit('PostgreSQL connectTimeoutMs', options.connectTimeoutMs, DEFAULT_PG_CONNECT_TIMEOUT_MS, { min: 0 });
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: timeout });
  // An idle connection dropped by the server: the pool discards it and the next query reconnects
  // (or fails with a coded error). Without a listener the event would crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/** Connects and migrates (under an advisory lock). */
export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<Store> {
  const pool = poolFor(url, options);
  try {
    await migratePostgres(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw wrapStoreError(err, isPgUnavailable, `opening ${redactUrl(url)}`);
  }
  const clock = options.now;
  const leases = new PgLeases(pool, clock);
  const threads = new PgThreads(pool);
  const ledger = new PgLedger(pool);
  const concerns = {
    outbox: new PgOutbox(pool, clock),
    keyed: new PgKeyed(pool, threads, clock, leases),
    checkpoints: new PgCheckpoints(pool, leases),
    leases,
    owners: new PgOwners(pool, clock),
    ledger,
    threads,
    deadLetters: new PgDeadLetters(pool, threads, clock),
    predictions: new PgPredictions(pool),
    counters: new PgCounters(pool, clock),
    console: new PgConsole(pool),
    controls: new PgControls(pool, clock),
    maintenance: new PgMaintenance(pool),
  };
  let closed = false;
  const lifecycle = {
    migrate: () => migratePostgres(pool),
    close: async () => {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
  return composeStore('postgres', concerns, lifecycle, { unavailable: isPgUnavailable, full: isPgFull });
}
