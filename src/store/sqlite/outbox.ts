/**
 * The SQLite outbox: claim, outcomes, depth and counts (the enqueue is `keyed.ts`).
 * better-sqlite3 is synchronous: each method runs to completion, inside one IMMEDIATE
 * transaction when it writes more than one statement.
 */
import type Database from 'better-sqlite3';
import { KeptBodies, type Body } from './kept-bodies.js';
import { MultiRowInsert } from './multi-row.js';
import { statement } from './statements.js';
import { storedOrigin } from '../../model/origin.js';
import { checkDelay, checkLimit, jsonOrNull, plainItem } from '../common.js';
import type { Backend } from '../compose.js';
import type {
  DeliveryInfo,
  ItemError,
  OutboxCount,
  OutboxInput,
  OutboxItem,
  OutboxStatus,
  OutboxStore,
  PendingAction,
  StoredItem,
} from '../types.js';
import { bodyOf, ITEM_COLUMNS, toItem, type DocRow, type OutboxRow } from './rows.js';
import type { SqliteCheckpoints } from './checkpoints.js';
import type { SqliteConsole } from './console.js';
import type { SqliteCounters } from './counters.js';
import type { SqliteLeases } from './leases.js';
import type { SqliteLedger } from './ledger.js';
import type { SqliteThreads } from './threads.js';
import type { WalSync } from './wal-sync.js';

/** What the outbox writes in its own transactions besides its rows. */
export interface OutboxParts {
  leases: SqliteLeases;
  checkpoints: SqliteCheckpoints;
  counters: SqliteCounters;
  threads: SqliteThreads;
  ledger: SqliteLedger;
  console: SqliteConsole;
}

const READY = `status = 'queued' AND next_attempt_at <= @now AND (lease_expires_at IS NULL OR lease_expires_at <= @now)`;

/**
 * The claim of ready items, of one route (`@route`) or of any. A route's ready items come from
 * the partial index of queued items: left to itself, SQLite walks the console's (route, id)
 * index instead and reads every delivered item of the route before the first queued one, a
 * cost that grew with the store at every claim.
 */
export function claimSql(ofRoute: boolean): string {
  const from = ofRoute ? 'outbox INDEXED BY outbox_ready_route WHERE route = @route AND' : 'outbox WHERE';
  return `UPDATE outbox SET lease_owner = @owner, lease_expires_at = @until
       WHERE id IN (SELECT id FROM ${from} ${READY} ORDER BY id LIMIT @limit)
       RETURNING ${ITEM_COLUMNS}`;
}

export class SqliteOutbox implements Backend<OutboxStore> {
  private readonly insertDocs: MultiRowInsert;
  private readonly insertRaws: MultiRowInsert;
  private readonly selectDocs: Database.Statement;
  private readonly deleteRaw: Database.Statement;
  private readonly selectKnownKeys: Database.Statement;
  private readonly renewLeases: Database.Statement;
  private readonly claimRoute: Database.Statement;
  private readonly claimAny: Database.Statement;
  private readonly claimTx: (route: string | undefined, params: Record<string, unknown>) => OutboxItem[];
  /** The bodies of items this connection enqueued and has not claimed yet (./kept-bodies.ts). */
  readonly kept: KeptBodies;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
    readonly parts: OutboxParts,
    private readonly wal: WalSync,
  ) {
    this.insertDocs = new MultiRowInsert(db, 'INSERT OR REPLACE INTO outbox_docs (id, document, preview, text_hash, doc_hash)', '', 5);
    this.insertRaws = new MultiRowInsert(db, 'INSERT OR REPLACE INTO outbox_raw (id, raw)', '', 2);
    this.selectDocs = db.prepare(
      'SELECT id, document, preview, text_hash, doc_hash FROM outbox_docs WHERE id IN (SELECT value FROM json_each(?))',
    );
    this.deleteRaw = db.prepare('DELETE FROM outbox_raw WHERE id IN (SELECT value FROM json_each(?))');
    this.selectKnownKeys = db.prepare('SELECT key FROM outbox WHERE route = ? AND key IN (SELECT value FROM json_each(?))');
    this.renewLeases = db.prepare(
      `UPDATE outbox SET lease_expires_at = ? WHERE status = 'queued' AND lease_owner = ? AND id IN (SELECT value FROM json_each(?))`,
    );
    this.kept = new KeptBodies(db);
    this.claimRoute = db.prepare(claimSql(true));
    this.claimAny = db.prepare(claimSql(false));
    const claimTx = db.transaction((route: string | undefined, params: Record<string, unknown>) => this.claimNow(route, params));
    this.claimTx = (route, params) => claimTx.immediate(route, params);
  }

  /**
   * Writes the wide values of items to the side tables (document always; raw bytes when given),
   * a few statements for any number; not their search rows. Any body kept for these ids is
   * forgotten; what a claim of the queued ones would read is returned, for the caller to keep
   * (`kept.add`) once its transaction has committed.
   */
  putBodies(items: ReadonlyArray<{ id: number; item: OutboxInput }>): Array<{ id: number; body: Body }> {
    const fresh: Array<{ id: number; body: Body }> = [];
    this.insertDocs.run(
      items.map(({ id, item }) => {
        this.kept.take(id);
        const document = item.json?.document ?? JSON.stringify(item.document);
        const preview = item.json === undefined ? jsonOrNull(item.preview) : (item.json.preview ?? null);
        const hashes = item.hashes;
        if (item.error === undefined) fresh.push({ id, body: { document, preview, hashes } });
        return [id, document, preview, hashes?.textHash ?? null, hashes?.docHash ?? null];
      }),
    );
    const raws: unknown[][] = [];
    for (const { id, item } of items) if (item.raw !== undefined) raws.push([id, item.raw]);
    this.insertRaws.run(raws);
    return fresh;
  }

  /** Deletes the side rows of outbox rows about to be deleted (call inside the caller's transaction). */
  deleteBodies(where: string, params: Record<string, unknown>): void {
    for (const table of ['outbox_docs', 'outbox_raw']) {
      statement(this.db, `DELETE FROM ${table} WHERE id IN (SELECT id FROM outbox WHERE ${where})`).run(params);
    }
  }

  getItem(id: number): StoredItem | undefined {
    const r = statement(this.db, `SELECT ${ITEM_COLUMNS}, outcome FROM outbox WHERE id = ?`).get(id) as
      | (OutboxRow & { outcome: string | null })
      | undefined;
    const d =
      r === undefined
        ? undefined
        : (statement(this.db, 'SELECT document, preview, text_hash, doc_hash FROM outbox_docs WHERE id = ?').get(id) as DocRow | undefined);
    if (r === undefined || d === undefined) return undefined;
    const item: StoredItem = { ...plainItem(toItem(r, bodyOf(d))), status: r.status as OutboxStatus };
    if (r.outcome === 'delivered' || r.outcome === 'unchanged') item.outcome = r.outcome;
    if (r.finished_at !== null) item.finishedAt = new Date(r.finished_at).toISOString();
    return item;
  }

  /**
   * What a claim answers is durable: an item whose enqueue is still waiting for its own sync is in
   * the same WAL, before the claim, and the claim then waits for a sync that covers it, so nothing
   * is sent that a power cut could take back. The claim's own writes need no sync (lost, they only
   * let the items be claimed and sent again, which delivery allows for anyway): a claim made when
   * every enqueue before it is synced, or one that found nothing, waits for no disk.
   */
  claim(route: string | undefined, limit: number, owner: string, leaseMs: number): OutboxItem[] | Promise<OutboxItem[]> {
    const now = this.now();
    const params = { now, owner, until: now + checkDelay('leaseMs', leaseMs, 1), limit: checkLimit(limit) };
    return this.wal.afterDurable(
      () => this.claimTx(route, params),
      (items) => items.length > 0,
    );
  }

  /**
   * The claim's outbox rows, with each document taken from what this connection kept of its
   * enqueue, or else read back from `outbox_docs`.
   */
  private claimNow(route: string | undefined, params: Record<string, unknown>): OutboxItem[] {
    const rows = (route === undefined ? this.claimAny.all(params) : this.claimRoute.all({ ...params, route })) as OutboxRow[];
    if (rows.length === 0) return [];
    this.kept.check();
    const bodies = new Map<number, Body>();
    const missing: number[] = [];
    for (const r of rows) {
      const body = this.kept.take(r.id);
      if (body === undefined) missing.push(r.id);
      else bodies.set(r.id, body);
    }
    if (missing.length > 0) {
      for (const d of this.selectDocs.all(JSON.stringify(missing)) as Array<DocRow & { id: number }>) bodies.set(d.id, bodyOf(d));
    }
    return rows
      .sort((a, b) => a.id - b.id)
      .map((r) => {
        const body = bodies.get(r.id);
        if (body === undefined) throw new Error(`outbox item ${r.id} has no document row`);
        return toItem(r, body);
      });
  }

  markDelivered(ids: number[], info: DeliveryInfo): number | Promise<number> {
    if (ids.length === 0 && info.aiUnits === undefined && info.ledger === undefined) return 0;
    return this.wal.durably(() => this.markDeliveredNow(ids, info));
  }

  private markDeliveredNow(ids: number[], info: DeliveryInfo): number {
    return this.db
      .transaction(() => {
        const now = this.now();
        const rows =
          ids.length === 0
            ? []
            : (statement(
                this.db,
                `UPDATE outbox SET status = 'delivered', outcome = ?, finished_at = ?, lease_owner = NULL, lease_expires_at = NULL
         WHERE status = 'queued' AND id IN (SELECT value FROM json_each(?)) RETURNING id, route`,
              ).all(info.outcome, now, JSON.stringify(ids)) as Array<{ id: number; route: string }>);
        if (rows.length > 0) this.deleteRaw.run(JSON.stringify(rows.map((r) => r.id)));
        // Settled without a claim of this connection (a claim takes what it kept): not claimed again.
        for (const r of rows) this.kept.take(r.id);
        this.parts.counters.bumpEach(
          rows.map((r) => r.route),
          info.outcome,
        );
        if (info.aiUnits !== undefined) this.parts.counters.addUnits(info.aiUnits.route, info.aiUnits.units);
        for (const l of info.ledger ?? []) this.parts.ledger.put(l.source, l.entries);
        return rows.length;
      })
      .immediate();
  }

  knownKeys(route: string, keys: string[]): Set<string> {
    if (keys.length === 0) return new Set();
    const rows = this.selectKnownKeys.all(route, JSON.stringify(keys)) as Array<{ key: string }>;
    return new Set(rows.map((r) => r.key));
  }

  renewClaims(ids: number[], owner: string, leaseMs: number): number {
    if (ids.length === 0) return 0;
    const until = this.now() + checkDelay('leaseMs', leaseMs, 1);
    return this.renewLeases.run(until, owner, JSON.stringify(ids)).changes;
  }

  scheduleRetry(ids: number | number[], delayMs: number, reason: ItemError): number {
    const list = Array.isArray(ids) ? ids : [ids];
    const due = this.now() + checkDelay('delayMs', delayMs, 0);
    return this.db
      .transaction(() => {
        const rows = statement(
          this.db,
          `UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?,
         lease_owner = NULL, lease_expires_at = NULL
       WHERE status = 'queued' AND id IN (SELECT value FROM json_each(?)) RETURNING id, route`,
        ).all(due, JSON.stringify(reason), JSON.stringify(list)) as Array<{ id: number; route: string }>;
        this.parts.console.recordAttempts(rows, 'retry', reason, delayMs);
        return rows.length;
      })
      .immediate();
  }

  deadLetter(id: number, error: ItemError): boolean {
    return this.db
      .transaction(() => {
        const row = statement(
          this.db,
          `UPDATE outbox SET status = 'dead', finished_at = ?, last_error = ?, lease_owner = NULL, lease_expires_at = NULL
         WHERE status = 'queued' AND id = ? RETURNING id, route`,
        ).get(this.now(), JSON.stringify(error), id) as { id: number; route: string } | undefined;
        if (row !== undefined) {
          this.kept.take(row.id);
          this.parts.counters.bump(row.route, 'dead_lettered', 1);
          this.parts.console.recordAttempts([row], 'dead', error);
        }
        return row !== undefined;
      })
      .immediate();
  }

  pruneDelivered(olderThan: Date): number {
    return this.db
      .transaction(() => {
        const where = `status = 'delivered' AND action_due = 0 AND finished_at < @before`;
        const params = { before: olderThan.getTime() };
        this.deleteBodies(where, params);
        return statement(this.db, `DELETE FROM outbox WHERE ${where}`).run(params).changes;
      })
      .immediate();
  }

  pendingActions(limit: number, afterId = 0): PendingAction[] {
    const rows = statement(
      this.db,
      `SELECT id, route, key, origin FROM outbox WHERE status = 'delivered' AND action_due = 1 AND id > ? ORDER BY id LIMIT ?`,
    ).all(afterId, checkLimit(limit)) as Array<{ id: number; route: string; key: string; origin: string }>;
    return rows.map((r) => ({ id: r.id, route: r.route, origin: storedOrigin(JSON.parse(r.origin), r.key) }));
  }

  finishActions(ids: number[]): number {
    if (ids.length === 0) return 0;
    return statement(this.db, `UPDATE outbox SET action_due = 0 WHERE action_due = 1 AND id IN (SELECT value FROM json_each(?))`).run(
      JSON.stringify(ids),
    ).changes;
  }

  outboxDepth(route?: string): number {
    const row = (
      route === undefined
        ? statement(this.db, `SELECT COUNT(*) AS n FROM outbox WHERE status = 'queued'`).get()
        : statement(this.db, `SELECT COUNT(*) AS n FROM outbox WHERE status = 'queued' AND route = ?`).get(route)
    ) as { n: number };
    return row.n;
  }

  outboxCounts(): OutboxCount[] {
    const rows = statement(
      this.db,
      'SELECT route, status, COUNT(*) AS n FROM outbox GROUP BY route, status ORDER BY route, status',
    ).all() as Array<{ route: string; status: OutboxStatus; n: number }>;
    return rows.map((r) => ({ route: r.route, status: r.status, count: r.n }));
  }
}
