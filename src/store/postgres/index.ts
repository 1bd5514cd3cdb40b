/**
 * The scale-out store: PostgreSQL through a `pg` Pool, shared by any number of gateway
 * replicas. Durability is PostgreSQL's own (fsync, synchronous_commit): a commit that
 * returned is on disk unless the server is configured otherwise.
 */
import pg from 'pg';
import { GatewayError } from '../../errors.js';
import { redactUrl } from '../../logger.js';
import type { Checkpoint } from '../../model/origin.js';
import { checkAiUnits, wrapStoreError } from '../common.js';
import type * as T from '../types.js';
import { isPgUnavailable, nowParam, withTransaction, type PgClock } from './db.js';
import { addDailyUnits, PgItems } from './items.js';
import { PgDeadLetters } from './dead-letters.js';
import { PgKeyed } from './keyed.js';
import { migratePostgres } from './migrations.js';
import { bumpCounters, PgOutbox, putCheckpoint, putFencedCheckpoint } from './outbox.js';
import { PgLeases } from './leases.js';
import { PgOwners } from './owners.js';
import { PgState } from './state.js';

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
  const max = options.poolSize ?? DEFAULT_PG_POOL_SIZE;
  const timeout = options.connectTimeoutMs ?? DEFAULT_PG_CONNECT_TIMEOUT_MS;
  if (!Number.isInteger(max) || max < 1) {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `PostgreSQL pool size must be a positive integer, got ${String(max)}`);
  }
  if (!Number.isInteger(timeout) || timeout < 0) {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `PostgreSQL connect timeout must be a non-negative integer, got ${String(timeout)}`,
    );
  }
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: timeout });
  // An idle connection dropped by the server: the pool discards it and the next query reconnects
  // (or fails with a coded error). Without a listener the event would crash the process.
  pool.on('error', () => undefined);
  return pool;
}

export class PostgresStore implements T.Store {
  readonly kind = 'postgres';
  private readonly outbox: PgOutbox;
  private readonly dead: PgDeadLetters;
  private readonly state: PgState;
  private readonly keyed: PgKeyed;
  private readonly owners: PgOwners;
  private readonly leases: PgLeases;
  private readonly items: PgItems;
  private readonly clock: PgClock;
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    clock: PgClock,
  ) {
    this.state = new PgState(pool, clock);
    this.leases = new PgLeases(pool, clock);
    this.outbox = new PgOutbox(pool, this.state, clock, this.leases);
    this.dead = new PgDeadLetters(pool, this.state, clock);
    this.keyed = new PgKeyed(pool, this.state, clock);
    this.owners = new PgOwners(pool, clock);
    this.items = new PgItems(pool);
    this.clock = clock;
  }

  /** Connects and migrates (under an advisory lock). */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresStore> {
    const pool = poolFor(url, options);
    try {
      await migratePostgres(pool);
      return new PostgresStore(pool, options.now);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw wrapStoreError(err, isPgUnavailable, `opening ${redactUrl(url)}`);
    }
  }

  private async guard<R>(what: string, fn: () => Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (err) {
      throw wrapStoreError(err, isPgUnavailable, what);
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
      fence === undefined ? putCheckpoint(this.pool, key, value) : putFencedCheckpoint(this.pool, this.leases, key, value, fence),
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
      withTransaction(this.pool, async (client) => {
        await bumpCounters(client, 'ai_units', new Map([[route, checkAiUnits(n)]]));
        await addDailyUnits(client, route, n, nowParam(this.clock));
      }),
    );
  }
  counters(route?: string) {
    return this.guard('counters', () => this.state.counters(route));
  }

  listItems(query: T.ItemQuery) {
    return this.guard('listItems', () => this.items.list(query));
  }
  itemAttempts(id: number) {
    return this.guard('itemAttempts', () => this.items.attempts(id));
  }
  itemRaw(id: number) {
    return this.guard('itemRaw', () => this.items.raw(id));
  }
  itemsByComment(route: string, commentIds: string[]) {
    return this.guard('itemsByComment', () => this.items.byComment(route, commentIds));
  }
  itemCounts() {
    return this.guard('itemCounts', () => this.items.counts());
  }
  attemptCounts(since: Date) {
    return this.guard('attemptCounts', () => this.items.attemptCounts(since));
  }
  aiUnitsByDay(since: string) {
    return this.guard('aiUnitsByDay', () => this.items.unitsByDay(since));
  }

  migrate() {
    return this.guard('migrate', () => migratePostgres(this.pool));
  }
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
