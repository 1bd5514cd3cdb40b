/**
 * The embedded store: one SQLite file in WAL mode through better-sqlite3.
 *
 * Durability: `synchronous=FULL` (default) syncs the WAL at every commit, so a committed
 * enqueue survives a power cut; `NORMAL` syncs only at checkpoints: faster, and a power cut
 * (not a process crash) may lose the last transactions, which then come back from their
 * origin because their checkpoint rolled back with them. See docs/store.md.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { GatewayError } from '../../errors.js';
import type { Checkpoint } from '../../model/origin.js';
import { checkAiUnits, wrapStoreError } from '../common.js';
import type * as T from '../types.js';
import { SqliteDeadLetters } from './dead-letters.js';
import { SqliteKeyed } from './keyed.js';
import { migrateSqlite } from './migrations.js';
import { SqliteOutbox } from './outbox.js';
import { SqliteLeases } from './leases.js';
import { SqliteOwners } from './owners.js';
import { SqliteState } from './state.js';

export interface SqliteOptions {
  /** `FULL` (default): every commit survives a power cut. `NORMAL`: faster; see the module comment. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a write waits for another connection's lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * The clock every stored time comes from (enqueue, claim and lease expiry, retry due
   * times, leases), in ms since the epoch; default `Date.now`. Tests inject a fake one.
   */
  now?: () => number;
}

export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5_000;

const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|READONLY|NOTADB|CORRUPT|PERM|AUTH)/;

function isUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNAVAILABLE.test(code)) return true;
  return err instanceof TypeError && /database connection is not open/.test(err.message);
}

/** Page size of a new database, in bytes. */
export const SQLITE_PAGE_SIZE = 16_384;

function openDatabase(path: string, options: SqliteOptions): Database.Database {
  const busy = options.busyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS;
  if (!Number.isInteger(busy) || busy < 0) {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `SQLite busy timeout must be a non-negative integer, got ${String(busy)}`);
  }
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    db.pragma(`busy_timeout = ${busy}`);
    // A new database gets 16 KiB pages: a message's document and raw bytes (a few KiB each)
    // then fit in one page instead of spilling into overflow pages, which halves what an
    // enqueue writes. An existing database keeps its page size (it is fixed once written).
    db.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    db.pragma('foreign_keys = ON');
    return db;
  } catch (err) {
    throw new GatewayError('MAILGATE_ERR_STORE_UNAVAILABLE', `cannot open SQLite store ${path}: ${(err as Error).message}`, { cause: err });
  }
}

export class SqliteStore implements T.Store {
  readonly kind = 'sqlite';
  private readonly outbox: SqliteOutbox;
  private readonly dead: SqliteDeadLetters;
  private readonly state: SqliteState;
  private readonly keyed: SqliteKeyed;
  private readonly owners: SqliteOwners;
  private readonly leases: SqliteLeases;

  private constructor(
    private readonly db: Database.Database,
    now: () => number,
  ) {
    this.state = new SqliteState(db, now);
    this.leases = new SqliteLeases(db, now);
    this.outbox = new SqliteOutbox(db, this.state, now, this.leases);
    this.dead = new SqliteDeadLetters(db, this.outbox, now);
    this.keyed = new SqliteKeyed(db, this.outbox, now);
    this.owners = new SqliteOwners(db, now, this.leases);
  }

  /** Opens (creating parent directories) and migrates. */
  static async open(path: string, options: SqliteOptions = {}): Promise<SqliteStore> {
    const db = openDatabase(path, options);
    try {
      migrateSqlite(db);
      return new SqliteStore(db, options.now ?? Date.now);
    } catch (err) {
      db.close();
      throw wrapStoreError(err, isUnavailable, `opening ${path}`);
    }
  }

  private async guard<R>(what: string, fn: () => R): Promise<R> {
    try {
      return fn();
    } catch (err) {
      throw wrapStoreError(err, isUnavailable, what);
    }
  }

  enqueue(items: T.OutboxInput[], checkpoint?: Checkpoint, fence?: T.Fence) {
    return this.guard('enqueue', () => this.outbox.enqueue(items, checkpoint, fence));
  }
  claim(route: string | undefined, limit: number, owner: string, leaseMs: number) {
    return this.guard('claim', () => this.outbox.claim(route, limit, owner, leaseMs));
  }
  markDelivered(ids: number[], info: T.DeliveryInfo) {
    return this.guard('markDelivered', () => this.outbox.markDelivered(ids, info));
  }
  knownKeys(route: string, keys: string[]) {
    return this.guard('knownKeys', () => this.outbox.knownKeys(route, keys));
  }
  renewClaims(ids: number[], owner: string, leaseMs: number) {
    return this.guard('renewClaims', () => this.outbox.renewClaims(ids, owner, leaseMs));
  }
  scheduleRetry(ids: number | number[], delayMs: number, reason: T.ItemError) {
    return this.guard('scheduleRetry', () => this.outbox.scheduleRetry(ids, delayMs, reason));
  }
  deadLetter(id: number, error: T.ItemError) {
    return this.guard('deadLetter', () => this.outbox.deadLetter(id, error));
  }
  pruneDelivered(olderThan: Date) {
    return this.guard('pruneDelivered', () => this.outbox.pruneDelivered(olderThan));
  }
  outboxDepth(route?: string) {
    return this.guard('outboxDepth', () => this.outbox.depth(route));
  }
  outboxCounts() {
    return this.guard('outboxCounts', () => this.outbox.counts());
  }
  getItem(id: number) {
    return this.guard('getItem', () => this.outbox.getItem(id));
  }
  enqueueKeyed(items: T.OutboxInput[]) {
    return this.guard('enqueueKeyed', () => this.keyed.enqueue(items));
  }
  findKeys(route: string, keys: string[]) {
    return this.guard('findKeys', () => this.keyed.findKeys(route, keys));
  }
  itemState(id: number) {
    return this.guard('itemState', () => this.keyed.itemState(id));
  }
  pendingActions(limit: number, afterId?: number) {
    return this.guard('pendingActions', () => this.outbox.pendingActions(limit, afterId));
  }
  finishActions(ids: number[]) {
    return this.guard('finishActions', () => this.outbox.finishActions(ids));
  }

  getCheckpoint(key: string) {
    return this.guard('getCheckpoint', () => this.state.getCheckpoint(key));
  }
  setCheckpoint(key: string, value: Checkpoint['value'], fence?: T.Fence) {
    return this.guard('setCheckpoint', () =>
      fence === undefined ? this.outbox.setCheckpoint(key, value) : this.outbox.setFencedCheckpoint(key, value, fence),
    );
  }
  listCheckpoints() {
    return this.guard('listCheckpoints', () => this.state.listCheckpoints());
  }

  acquireLease(name: string, owner: string, ttlMs: number) {
    return this.guard('acquireLease', () => this.leases.acquire(name, owner, ttlMs));
  }
  renewLease(name: string, owner: string, ttlMs: number) {
    return this.guard('renewLease', () => this.leases.renew(name, owner, ttlMs));
  }
  renewLeases(owner: string, ttlMs: number) {
    return this.guard('renewLeases', () => this.leases.renewAll(owner, ttlMs));
  }
  releaseLease(name: string, owner: string) {
    return this.guard('releaseLease', () => this.leases.release(name, owner));
  }
  getLease(name: string) {
    return this.guard('getLease', () => this.leases.get(name));
  }
  listLeases() {
    return this.guard('listLeases', () => this.leases.list());
  }

  registerOwner(owner: T.OwnerRegistration) {
    return this.guard('registerOwner', () => this.owners.register(owner));
  }
  heartbeatOwner(id: string) {
    return this.guard('heartbeatOwner', () => this.owners.heartbeat(id));
  }
  deregisterOwner(id: string) {
    return this.guard('deregisterOwner', () => this.owners.deregister(id));
  }
  listOwners() {
    return this.guard('listOwners', () => this.owners.list());
  }
  reapOwners(dead: string[], missedBeats: number) {
    return this.guard('reapOwners', () => this.owners.reap(dead, missedBeats));
  }

  lookup(source: string, commentIds: string[]) {
    return this.guard('ledger lookup', () => this.state.lookup(source, commentIds));
  }
  record(source: string, entries: Array<T.LedgerEntry & { commentId: string }>) {
    return this.guard('ledger record', () => this.state.record(source, entries));
  }

  indexThread(source: string, entries: T.ThreadEntry[]) {
    return this.guard('indexThread', () => this.state.indexThread(source, entries));
  }
  threadMembers(source: string, threadIds: string[]) {
    return this.guard('threadMembers', () => this.state.threadMembers(source, threadIds));
  }

  listDeadLetters(query: T.DeadLetterQuery) {
    return this.guard('listDeadLetters', () => this.dead.list(query));
  }
  getDeadLetter(id: number) {
    return this.guard('getDeadLetter', () => this.dead.get(id));
  }
  replayDeadLetter(id: number, replacement: T.OutboxInput) {
    return this.guard('replayDeadLetter', () => this.dead.replay(id, replacement));
  }
  purgeDeadLetters(filter: T.PurgeFilter) {
    return this.guard('purgeDeadLetters', () => this.dead.purge(filter));
  }

  savePredictions(route: string, items: T.PredictionInput[]) {
    return this.guard('savePredictions', () => this.state.savePredictions(route, items));
  }
  listPredictions(query: T.PredictionQuery) {
    return this.guard('listPredictions', () => this.state.listPredictions(query));
  }

  addAiUnits(route: string, n: number) {
    return this.guard('addAiUnits', () =>
      this.db
        .transaction(() => {
          this.outbox.bump(route, 'ai_units', checkAiUnits(n));
          this.outbox.items.addDailyUnits(route, n);
        })
        .immediate(),
    );
  }
  counters(route?: string) {
    return this.guard('counters', () => this.state.counters(route));
  }

  listItems(query: T.ItemQuery) {
    return this.guard('listItems', () => this.outbox.items.list(query));
  }
  itemAttempts(id: number) {
    return this.guard('itemAttempts', () => this.outbox.items.attempts(id));
  }
  itemRaw(id: number) {
    return this.guard('itemRaw', () => this.outbox.items.raw(id));
  }
  itemsByComment(route: string, commentIds: string[]) {
    return this.guard('itemsByComment', () => this.outbox.items.byComment(route, commentIds));
  }
  itemCounts() {
    return this.guard('itemCounts', () => this.outbox.items.counts());
  }
  attemptCounts(since: Date) {
    return this.guard('attemptCounts', () => this.outbox.items.attemptCounts(since));
  }
  aiUnitsByDay(since: string) {
    return this.guard('aiUnitsByDay', () => this.outbox.items.unitsByDay(since));
  }

  migrate() {
    return this.guard('migrate', () => migrateSqlite(this.db));
  }
  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
