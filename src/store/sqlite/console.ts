/**
 * The console's read model in SQLite: the search row written with each item, the attempts
 * written with each outcome (inside the outbox's own transactions), and the console's reads.
 *
 * An enqueue writes its search rows to `outbox_search_new`, at the end of a table with no other
 * index; `foldSearches` moves them into `outbox_search` and its indexes later, and every read of
 * `outbox_search` folds what is left first, so a search always sees every item (./staged.ts).
 */
import type Database from 'better-sqlite3';
import type { LightWrites } from './light.js';
import { MultiRowInsert } from './multi-row.js';
import { StagedRows, type StagedTable } from './staged.js';
import { statement } from './statements.js';
import { checkLimit } from '../common.js';
import {
  checkDay,
  combineCounts,
  COUNT_SQL,
  DELIVERED_OUTCOME,
  checkItemQuery,
  prefixEnd,
  searchSql,
  SEARCH_PROBE_LIMIT,
  searchKey,
  type SearchFields,
  sortDaily,
  stateCondition,
  LIST_COLUMNS,
  type ListRow,
  toSummary,
} from '../console.js';
import type { Backend } from '../compose.js';
import type {
  AttemptCount,
  ConsoleStore,
  DailyAiUnits,
  ItemAttempt,
  ItemCount,
  ItemError,
  ItemListState,
  ItemQuery,
  ItemRaw,
  ItemSummary,
  OutboxStatus,
} from '../types.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * An item's attempts (parameters: its id twice): the retries and dead letters recorded in
 * `outbox_attempts`, then the delivery read from the item's own row (its outcome and finished_at),
 * which is always the last. A delivery writes no attempts row (rows a store of an earlier version
 * wrote for deliveries are left out: the item's row says the same).
 */
const ATTEMPTS_SQL = `SELECT at, outcome, code, message, delay_ms FROM (
    SELECT at, outcome, code, message, delay_ms, 0 AS last, rowid AS seq FROM outbox_attempts
      WHERE item_id = ? AND outcome IN ('retry', 'dead')
    UNION ALL SELECT finished_at, ${DELIVERED_OUTCOME}, NULL, NULL, NULL, 1, 0 FROM outbox WHERE id = ? AND status = 'delivered')
  ORDER BY last, at, seq`;

/** Attempts per route and outcome since `at` (twice): retries and dead letters by their index, deliveries by the delivered items' (finished_at). */
const ATTEMPT_COUNTS_SQL = `SELECT route, outcome, COUNT(*) AS n FROM (
    SELECT route, outcome FROM outbox_attempts WHERE at >= ? AND outcome IN ('retry', 'dead')
    UNION ALL SELECT route, ${DELIVERED_OUTCOME} FROM outbox WHERE status = 'delivered' AND finished_at >= ?)
  GROUP BY route, outcome ORDER BY route, outcome`;

/** The columns of `outbox_search` and `outbox_search_new`, in `searchRow`'s order. */
const SEARCH_ROW_COLUMNS = `id, route, adapter, account, sender, sender_name, subject, message_id, msg_ts,
  s_sender, s_name, s_subject, s_message_id, s_comment_id`;

/** An upsert's update of every column but the id from `excluded`. */
const UPDATE_SEARCH_ROW = `ON CONFLICT (id) DO UPDATE SET route = excluded.route, adapter = excluded.adapter, account = excluded.account,
  sender = excluded.sender, sender_name = excluded.sender_name, subject = excluded.subject, message_id = excluded.message_id,
  msg_ts = excluded.msg_ts, s_sender = excluded.s_sender, s_name = excluded.s_name, s_subject = excluded.s_subject,
  s_message_id = excluded.s_message_id, s_comment_id = excluded.s_comment_id`;

/** The search rows waiting in `outbox_search_new`; a replayed dead letter already folded is updated in place. */
const SEARCH_ROWS: StagedTable = {
  waiting: 'outbox_search_new',
  order: 'id',
  into: 'outbox_search',
  columns: SEARCH_ROW_COLUMNS,
  onConflict: UPDATE_SEARCH_ROW,
};

export class SqliteConsole implements Backend<ConsoleStore> {
  private readonly insertSearch: MultiRowInsert;
  private readonly insertAttempt: Database.Statement;
  /** The search rows waiting to be folded. */
  private readonly staged: StagedRows;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
    /** Folds commit without syncing the WAL (./light.ts): a fold lost to a power cut leaves its rows waiting. */
    writes: LightWrites,
  ) {
    this.staged = new StagedRows(db, SEARCH_ROWS, writes);
    // An upsert, not INSERT OR REPLACE: REPLACE deletes first, which with foreign keys costs
    // several times the insert. Only a replayed dead letter has a row already.
    this.insertSearch = new MultiRowInsert(db, `INSERT INTO outbox_search_new (${SEARCH_ROW_COLUMNS})`, UPDATE_SEARCH_ROW, 14);
    // One statement for all the items of an outcome, their ids as one JSON array (each route read
    // from the item's row): a statement per item cost about twice the CPU, and a delivered batch
    // records hundreds.
    this.insertAttempt = db.prepare(
      `INSERT INTO outbox_attempts (item_id, route, at, outcome, code, message, delay_ms)
       SELECT o.id, o.route, ?, ?, ?, ?, ? FROM json_each(?) j JOIN outbox o ON o.id = j.value`,
    );
  }

  // --- writes, inside the caller's transaction ---------------------------------------------
  /** Writes the search rows of items (by id) for the next fold, a few statements for any number. */
  putSearches(items: ReadonlyArray<{ id: number; fields: SearchFields }>): void {
    this.insertSearch.run(items.map((i) => searchRow(i.id, i.fields)));
  }

  /** Moves at most `limit` waiting search rows, oldest first, in one light transaction; returns how many. */
  foldSearches(limit: number): number {
    return this.staged.step(limit);
  }

  /**
   * Folds every waiting search row (inside the caller's transaction): what the thread index's
   * pruning calls, which cannot let the event loop go between steps.
   */
  foldAll(): void {
    this.staged.all();
  }

  /** Records a retry or dead letter of each item (`rows`: outbox rows the outcome changed); a delivery is read from the item's row. */
  recordAttempts(rows: ReadonlyArray<{ id: number; route: string }>, outcome: 'retry' | 'dead', error?: ItemError, delayMs?: number) {
    const at = this.now();
    if (rows.length === 0) return;
    const ids = JSON.stringify(rows.map((r) => r.id));
    this.insertAttempt.run(at, outcome, error?.code ?? null, error?.message ?? null, delayMs ?? null, ids);
  }

  // --- reads ----------------------------------------------------------------------------------
  async listItems(query: ItemQuery): Promise<ItemSummary[]> {
    const q = checkItemQuery(query);
    await this.staged.inSteps();
    const where: string[] = [];
    const params: Record<string, unknown> = { limit: checkLimit(query.limit) };
    if (query.state !== undefined) where.push(stateCondition(query.state));
    if (query.route !== undefined) {
      where.push('o.route = @route');
      params.route = query.route;
    }
    // With a state other than delivered (few items, each with its own index), that index leads
    // and the adapter is checked per row (`+` keeps SQLite off the adapter index).
    const lead = query.state !== undefined && query.state !== 'delivered' ? '+' : '';
    if (query.adapter !== undefined) {
      where.push(`${lead}s.adapter = @adapter`);
      params.adapter = query.adapter;
    }
    if (query.account !== undefined) {
      where.push(`${lead}s.account = @account`);
      params.account = query.account;
    }
    if (query.since !== undefined) {
      where.push('o.enqueued_at >= @since');
      params.since = query.since.getTime();
    }
    if (query.until !== undefined) {
      where.push('o.enqueued_at < @until');
      params.until = query.until.getTime();
    }
    if (query.beforeId !== undefined) {
      where.push(query.adapter !== undefined && lead === '' ? 's.id < @before' : 'o.id < @before');
      params.before = query.beforeId;
    }
    const cond = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
    if (q === undefined) {
      // Led by the adapter index, the order is the search row's id (the same id): SQLite does not
      // carry an order across a join's equality.
      const byAdapter = query.adapter !== undefined && lead === '';
      const sql = byAdapter
        ? `SELECT ${LIST_COLUMNS} FROM outbox_search s JOIN outbox o ON o.id = s.id ${cond} ORDER BY s.id DESC LIMIT @limit`
        : `SELECT ${LIST_COLUMNS} FROM outbox o LEFT JOIN outbox_search s ON s.id = o.id ${cond} ORDER BY o.id DESC LIMIT @limit`;
      return (statement(this.db, sql).all(params) as ListRow[]).map(toSummary);
    }
    params.lo = q;
    params.hi = prefixEnd(q);
    const s = searchSql('@lo', '@hi', '+');
    const found = (statement(this.db, `SELECT ${s.probe} AS n`).get({ lo: q, hi: params.hi }) as { n: number }).n;
    // Few matches: their ids from the indexes, sorted newest first, each joined only until the page is
    // full (the LIMIT keeps the subquery's order, CROSS JOIN keeps it the outer loop); many: walk the
    // outbox newest first until the page is full.
    const before = query.beforeId === undefined ? '' : 'WHERE id < @before';
    const sql =
      found < SEARCH_PROBE_LIMIT
        ? `SELECT ${LIST_COLUMNS} FROM (SELECT id FROM (${s.matches}) ${before} ORDER BY id DESC LIMIT -1) m
           CROSS JOIN outbox o ON o.id = m.id CROSS JOIN outbox_search s ON s.id = o.id ${cond} ORDER BY m.id DESC LIMIT @limit`
        : `SELECT ${LIST_COLUMNS} FROM outbox o JOIN outbox_search s ON s.id = o.id
           WHERE ${s.scan} ${where.length === 0 ? '' : `AND ${where.join(' AND ')}`} ORDER BY o.id DESC LIMIT @limit`;
    return (statement(this.db, sql).all(params) as ListRow[]).map(toSummary);
  }

  itemAttempts(id: number): ItemAttempt[] {
    const rows = statement(this.db, ATTEMPTS_SQL).all(id, id) as Array<{
      at: number;
      outcome: ItemAttempt['outcome'];
      code: string | null;
      message: string | null;
      delay_ms: number | null;
    }>;
    return rows.map((r) => {
      const a: ItemAttempt = { at: iso(r.at), outcome: r.outcome };
      if (r.code !== null) a.error = { code: r.code, message: r.message ?? '' };
      if (r.delay_ms !== null) a.delayMs = r.delay_ms;
      return a;
    });
  }

  itemRaw(id: number): ItemRaw | undefined {
    const r = statement(this.db, 'SELECT o.status, r.raw FROM outbox o LEFT JOIN outbox_raw r ON r.id = o.id WHERE o.id = ?').get(id) as
      | { status: OutboxStatus; raw: Buffer | null }
      | undefined;
    if (r === undefined) return undefined;
    return r.raw === null ? { status: r.status } : { status: r.status, raw: r.raw };
  }

  async itemsByComment(route: string, commentIds: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (commentIds.length === 0) return out;
    await this.staged.inSteps();
    const rows = statement(
      this.db,
      `SELECT o.comment_id, MAX(o.id) AS id FROM outbox_search s JOIN outbox o ON o.id = s.id
         WHERE s.s_comment_id IN (SELECT lower(value) FROM json_each(?)) AND o.route = ? GROUP BY o.comment_id`,
    ).all(JSON.stringify(commentIds), route) as Array<{ comment_id: string; id: number }>;
    for (const r of rows) out.set(r.comment_id, r.id);
    return out;
  }

  async itemCounts(): Promise<ItemCount[]> {
    type Row = { route: string; adapter: string; state?: ItemListState; n: number };
    await this.staged.inSteps();
    return this.db
      .transaction(() => {
        const totals = statement(this.db, COUNT_SQL.totals).all() as Row[];
        const parts = [...(statement(this.db, COUNT_SQL.open).all() as Row[]), ...(statement(this.db, COUNT_SQL.unchanged).all() as Row[])];
        return combineCounts(totals, parts);
      })
      .deferred();
  }

  attemptCounts(since: Date): AttemptCount[] {
    const at = since.getTime();
    const rows = statement(this.db, ATTEMPT_COUNTS_SQL).all(at, at) as Array<{ route: string; outcome: ItemAttempt['outcome']; n: number }>;
    return rows.map((r) => ({ route: r.route, outcome: r.outcome, count: r.n }));
  }

  aiUnitsByDay(since: string): DailyAiUnits[] {
    const rows = statement(this.db, 'SELECT route, day, units FROM ai_units_daily WHERE day >= ?').all(checkDay(since)) as DailyAiUnits[];
    return sortDaily(rows);
  }
}

/**
 * The values of one `outbox_search` row in its column order (id, route, adapter, account,
 * sender, sender_name, subject, message_id, msg_ts, then the search keys s_sender, s_name,
 * s_subject, s_message_id, s_comment_id).
 */
export function searchRow(id: number, f: SearchFields): unknown[] {
  return [
    id,
    f.route,
    f.adapter,
    f.account,
    f.sender,
    f.senderName,
    f.subject,
    f.messageId,
    f.timestamp,
    searchKey(f.sender),
    searchKey(f.senderName),
    searchKey(f.subject),
    searchKey(f.messageId),
    f.commentId.toLowerCase(),
  ];
}
