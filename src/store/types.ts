/**
 * The Store contract (DESIGN.md "State"), by concern: the outbox and push intake's keyed writes
 * (contract/outbox.ts), ownership — owners, leases with their fencing tokens, and the
 * checkpoints they protect (contract/ownership.ts), the ledger (src/ledger/), the thread index
 * (contract/threads.ts), dead letters (contract/dead-letters.ts), predictions and counters
 * (contract/predictions.ts) and the console's read model (contract/console.ts). A caller that
 * needs one concern takes that contract; `Store` is their composition. Two implementations
 * (sqlite/, postgres/), each a folder of per-concern modules composed by src/store/compose.ts,
 * pass one conformance suite (test/contract/store.case.ts).
 *
 * Every method is async so that both an embedded and a networked database fit. Times are
 * the store's own clock (SQLite: this process; PostgreSQL: the server), returned as ISO-8601;
 * leases and due times follow the `now` the store was opened with, when it was given one.
 */
import type { Ledger } from '../ledger/index.js';
import type { ConsoleStore } from './contract/console.js';
import type { ControlStore } from './contract/controls.js';
import type { DeadLetterStore } from './contract/dead-letters.js';
import type { MaintenanceStore, StoreFull } from './contract/maintenance.js';
import type { KeyedStore, OutboxStore } from './contract/outbox.js';
import type { CheckpointStore, LeaseStore, OwnerStore } from './contract/ownership.js';
import type { CounterStore, PredictionStore } from './contract/predictions.js';
import type { ThreadStore } from './contract/threads.js';

/** The ledger the batcher reads and writes; every Store is one (src/ledger/). */
export type { Ledger, LedgerEntry, LedgerRecord } from '../ledger/index.js';
export type * from './contract/console.js';
export type * from './contract/controls.js';
export type * from './contract/dead-letters.js';
export type * from './contract/maintenance.js';
export type * from './contract/outbox.js';
export type * from './contract/ownership.js';
export type * from './contract/predictions.js';
export type * from './contract/threads.js';

/** Each concern's contract, by the name the implementations compose them under. */
export interface StoreConcerns {
  outbox: OutboxStore;
  keyed: KeyedStore;
  checkpoints: CheckpointStore;
  leases: LeaseStore;
  owners: OwnerStore;
  ledger: Ledger;
  threads: ThreadStore;
  deadLetters: DeadLetterStore;
  predictions: PredictionStore;
  counters: CounterStore;
  console: ConsoleStore;
  controls: ControlStore;
  maintenance: MaintenanceStore;
}

/** Opening, migrating and closing a store. */
export interface StoreLifecycle {
  /** `sqlite` or `postgres`. */
  readonly kind: string;
  /** Applies pending migrations (run by openStore; safe to call again). Returns the schema version. */
  migrate(): Promise<number>;
  /**
   * Writes failing for want of space: set by the first such failure (SQLITE_FULL, a full disk,
   * PostgreSQL disk_full), cleared when the method that failed succeeds again or a space probe
   * (`probeSpace`) does. Readiness, the log and the console report it.
   */
  health(): { full?: StoreFull };
  close(): Promise<void>;
}

export interface Store
  extends StoreLifecycle,
    OutboxStore,
    KeyedStore,
    CheckpointStore,
    LeaseStore,
    OwnerStore,
    Ledger,
    ThreadStore,
    DeadLetterStore,
    PredictionStore,
    CounterStore,
    ConsoleStore,
    ControlStore,
    MaintenanceStore {}
