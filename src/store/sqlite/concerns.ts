/** The concerns of a SQLite store over one connection (the calling thread's, or the writer thread's). */
import type Database from 'better-sqlite3';
import { SqliteCheckpoints } from './checkpoints.js';
import { SqliteConsole } from './console.js';
import { SqliteControls } from './controls.js';
import { SqliteCounters } from './counters.js';
import { SqliteDeadLetters } from './dead-letters.js';
import { SqliteKeyed } from './keyed.js';
import { SqliteLeases } from './leases.js';
import { SqliteLedger } from './ledger.js';
import { SqliteMaintenance } from './maintenance.js';
import { SqliteOutbox } from './outbox.js';
import { SqliteOwners } from './owners.js';
import { SqlitePredictions } from './predictions.js';
import { SqliteThreads } from './threads.js';
import type { WalSync } from './wal-sync.js';

export function sqliteConcerns(db: Database.Database, now: () => number, synchronous: 'FULL' | 'NORMAL', wal: WalSync) {
  const leases = new SqliteLeases(db, now);
  const parts = {
    leases,
    checkpoints: new SqliteCheckpoints(db, now, leases),
    counters: new SqliteCounters(db, now),
    threads: new SqliteThreads(db),
    ledger: new SqliteLedger(db),
    console: new SqliteConsole(db, now),
    controls: new SqliteControls(db, now, synchronous),
  };
  const outbox = new SqliteOutbox(db, now, parts, wal);
  return {
    ...parts,
    outbox,
    keyed: new SqliteKeyed(db, outbox, now, wal),
    owners: new SqliteOwners(db, now, leases),
    deadLetters: new SqliteDeadLetters(db, outbox, now),
    predictions: new SqlitePredictions(db, now),
    maintenance: new SqliteMaintenance(db),
  };
}

export type SqliteConcerns = ReturnType<typeof sqliteConcerns>;

/**
 * The writes the writer thread makes (`SqliteOptions.writerThread`), by concern: every write of
 * intake, delivery, ownership and poison counting, so that the calling thread's connection only
 * reads and no write waits for the other's lock. (Maintenance, the console's replays and
 * backups keep the calling thread's connection.)
 */
export const WRITER_METHODS = {
  outbox: ['claim', 'markDelivered', 'renewClaims', 'scheduleRetry', 'deadLetter', 'finishActions'],
  keyed: ['enqueue'],
  checkpoints: ['setCheckpoint'],
  leases: ['acquireLease', 'renewLease', 'renewLeases', 'releaseLease'],
  owners: ['registerOwner', 'heartbeatOwner', 'deregisterOwner', 'reapOwners'],
  ledger: ['record'],
  threads: ['indexThread'],
  predictions: ['savePredictions'],
  counters: ['addAiUnits'],
  controls: ['beginParseAttempts', 'clearParseAttempts', 'countParseAttempts', 'countFiltered', 'putMailboxState', 'putFolderState'],
} as const satisfies { [K in keyof SqliteConcerns]?: ReadonlyArray<keyof SqliteConcerns[K]> };

export type WriterConcern = keyof typeof WRITER_METHODS;
