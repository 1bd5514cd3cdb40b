/**
 * The console's read model in PostgreSQL: the search rows written with items, AI units
 * per day, and the console's reads. Attempts are written by the outbox's own statements
 * (`ATTEMPT_INSERT`), in the transaction of the outcome they record.
 */
import type pg from 'pg';
import { checkLimit } from '../common.js';
import {
  checkDay,
  combineCounts,
  COUNT_SQL,
  DELIVERED_OUTCOME,
  checkItemQuery,
  prefixEnd,
  type SearchFields,
  searchKey,
  searchSql,
  sortDaily,
  stateCondition,
  LIST_COLUMNS,
  type ListRow,
  toSummary,
  SEARCH_PROBE_LIMIT,
} from '../console.js';
import type { Backend } from '../compose.js';
import type {
  AttemptCount,
  ConsoleStore,
  DailyAiUnits,
  ItemAttempt,
  ItemCount,
  ItemListState,
  ItemQuery,
  ItemRaw,
  ItemSummary,
  OutboxStatus,
} from '../types.js';
import { iso, pgArray, pgNow, pgText, toId, type Queryable } from './db.js';

/**
 * A CTE step recording one attempt per row of the CTE `u` (columns id, route): `$o` the
 * outcome, `$c`/`$m` the error code and message, `$d` the delay, `$n` the clock parameter.
 */
export function attemptInsert(p: { outcome: string; code: string; message: string; delay: string; now: number }): string {
  return `INSERT INTO outbox_attempts (item_id, route, at, outcome, code, message, delay_ms)
    SELECT id, route, ${pgNow(p.now)}, ${p.outcome}::text, ${p.code}::text, ${p.message}::text, ${p.delay}::integer FROM u`;
}

/**
 * An item's attempts (`$1` its id): the retries and dead letters recorded in `outbox_attempts`, then
 * the delivery read from the item's own row (outcome, finished_at), always the last. A delivery
 * writes no attempts row (rows an earlier version wrote for deliveries are left out: the item's
 * row says the same).
 */
const ATTEMPTS_SQL = `SELECT at, outcome, code, message, delay_ms FROM (
    SELECT at, outcome, code, message, delay_ms, 0 AS last, ctid AS seq FROM outbox_attempts
      WHERE item_id = $1 AND outcome IN ('retry', 'dead')
    UNION ALL SELECT finished_at, ${DELIVERED_OUTCOME}, NULL, NULL, NULL, 1, '(0,0)'::tid FROM outbox WHERE id = $1 AND status = 'delivered') a
  ORDER BY last, at, seq`;

/** Attempts per route and outcome since `$1`: retries and dead letters by their index, deliveries by the delivered items' (finished_at). */
const ATTEMPT_COUNTS_SQL = `SELECT route, outcome, COUNT(*) AS n FROM (
    SELECT route, outcome FROM outbox_attempts WHERE at >= $1 AND outcome IN ('retry', 'dead')
    UNION ALL SELECT route, ${DELIVERED_OUTCOME} FROM outbox WHERE status = 'delivered' AND finished_at >= $1) a
  GROUP BY route, outcome ORDER BY route, outcome`;

/** Absent (null, or undefined in an input of a legacy origin shape that turns out a duplicate) is NULL. */
const nul = (s: string | null | undefined): string | null => (s === null || s === undefined ? null : pgText(s));

/**
 * Array parameters of the search rows' insert (`searchValues`, `searchInsert`). Arrays rather than
 * one JSON text read with json_to_recordset: that costs the server about twice as much a row
 * (measured ~6 vs ~3 µs a row of 14 columns) for no gain in the client.
 */
export const SEARCH_PARAMS = 14;

export function searchValues(rows: SearchFields[]): string[] {
  const cols: Array<Array<string | Date | null>> = Array.from({ length: SEARCH_PARAMS }, () => []);
  for (const f of rows) {
    const row = [
      pgText(f.route),
      pgText(f.key),
      pgText(f.adapter),
      nul(f.account),
      nul(f.sender),
      nul(f.senderName),
      nul(f.subject),
      nul(f.messageId),
      f.timestamp === null ? null : new Date(f.timestamp),
      nul(searchKey(f.sender)),
      nul(searchKey(f.senderName)),
      nul(searchKey(f.subject)),
      nul(searchKey(f.messageId)),
      pgText(f.commentId.toLowerCase()),
    ];
    row.forEach((v, i) => cols[i]!.push(v));
  }
  return cols.map(pgArray);
}

/**
 * The search rows of the items among `rows` that `items` holds (`outbox`, or the inserted rows of
 * the enqueue's statement), matched by route and key; the 14 array parameters numbered from `$first`.
 */
export function searchInsert(items: string, first: number): string {
  const p = (i: number, type: string): string => `$${first + i}::${type}[]`;
  const text = Array.from({ length: 8 }, (_, i) => p(i, 'text'));
  return `INSERT INTO outbox_search (id, route, adapter, account, sender, sender_name, subject, message_id, msg_ts,
    s_sender, s_name, s_subject, s_message_id, s_comment_id)
  SELECT o.id, o.route, v.adapter, v.account, v.sender, v.sender_name, v.subject, v.message_id, v.msg_ts,
    v.s_sender, v.s_name, v.s_subject, v.s_message_id, v.s_comment_id
  FROM unnest(${text.join(', ')}, ${p(8, 'timestamptz')},
    ${p(9, 'text')}, ${p(10, 'text')}, ${p(11, 'text')}, ${p(12, 'text')}, ${p(13, 'text')})
    AS v (route, key, adapter, account, sender, sender_name, subject, message_id, msg_ts, s_sender, s_name, s_subject, s_message_id,
      s_comment_id)
  JOIN ${items} o ON o.route = v.route AND o.key = v.key`;
}

/**
 * Writes the search rows of items by (route, key), in the caller's transaction. `replace`:
 * overwrite an existing row (a replayed dead letter); otherwise an item that has one keeps it.
 */
export async function putSearch(db: Queryable, rows: SearchFields[], replace: boolean): Promise<void> {
  if (rows.length === 0) return;
  const conflict = replace
    ? `ON CONFLICT (id) DO UPDATE SET adapter = excluded.adapter, account = excluded.account, sender = excluded.sender,
       sender_name = excluded.sender_name, subject = excluded.subject, message_id = excluded.message_id, msg_ts = excluded.msg_ts,
       s_sender = excluded.s_sender, s_name = excluded.s_name, s_subject = excluded.s_subject, s_message_id = excluded.s_message_id,
       s_comment_id = excluded.s_comment_id`
    : 'ON CONFLICT (id) DO NOTHING';
  await db.query(`${searchInsert('outbox', 1)} ${conflict}`, searchValues(rows));
}

export class PgConsole implements Backend<ConsoleStore> {
  constructor(private readonly pool: pg.Pool) {}

  async listItems(query: ItemQuery): Promise<ItemSummary[]> {
    const q = checkItemQuery(query);
    const where: string[] = [];
    const params: unknown[] = [checkLimit(query.limit)];
    const add = (cond: (n: string) => string, value: unknown): void => {
      params.push(value);
      where.push(cond(`$${params.length}`));
    };
    if (query.state !== undefined) where.push(stateCondition(query.state));
    if (query.route !== undefined) add((n) => `o.route = ${n}`, query.route);
    if (query.adapter !== undefined) add((n) => `s.adapter = ${n}`, query.adapter);
    if (query.account !== undefined) add((n) => `s.account = ${n}`, query.account);
    if (query.since !== undefined) add((n) => `o.enqueued_at >= ${n}`, query.since);
    if (query.until !== undefined) add((n) => `o.enqueued_at < ${n}`, query.until);
    if (query.beforeId !== undefined) add((n) => `o.id < ${n}`, query.beforeId);
    const cond = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
    let from = 'outbox o LEFT JOIN outbox_search s ON s.id = o.id';
    let filter = cond;
    if (q !== undefined) {
      params.push(q, prefixEnd(q));
      const [lo, hi] = [`$${params.length - 1}`, `$${params.length}`];
      const s = searchSql(lo, hi, '');
      const probe = await this.pool.query<{ n: string }>(`SELECT ${searchSql('$1', '$2', '').probe} AS n`, [q, prefixEnd(q)]);
      // Few matches: read them through the indexes and sort; many: walk newest first until the page is full.
      if (toId(probe.rows[0]?.n ?? 0) < SEARCH_PROBE_LIMIT)
        from = `(${s.matches}) m JOIN outbox o ON o.id = m.id JOIN outbox_search s ON s.id = o.id`;
      else {
        from = 'outbox o JOIN outbox_search s ON s.id = o.id';
        filter = `WHERE ${[s.scan, ...where].join(' AND ')}`;
      }
    }
    const { rows } = await this.pool.query<ListRow>(`SELECT ${LIST_COLUMNS} FROM ${from} ${filter} ORDER BY o.id DESC LIMIT $1`, params);
    return rows.map(toSummary);
  }

  async itemAttempts(id: number): Promise<ItemAttempt[]> {
    const { rows } = await this.pool.query<{
      at: Date;
      outcome: ItemAttempt['outcome'];
      code: string | null;
      message: string | null;
      delay_ms: number | null;
    }>(ATTEMPTS_SQL, [id]);
    return rows.map((r) => {
      const a: ItemAttempt = { at: iso(r.at), outcome: r.outcome };
      if (r.code !== null) a.error = { code: r.code, message: r.message ?? '' };
      if (r.delay_ms !== null) a.delayMs = r.delay_ms;
      return a;
    });
  }

  async itemRaw(id: number): Promise<ItemRaw | undefined> {
    const { rows } = await this.pool.query<{ status: OutboxStatus; raw: Buffer | null }>(
      'SELECT o.status, r.raw FROM outbox o LEFT JOIN outbox_raw r ON r.id = o.id WHERE o.id = $1',
      [id],
    );
    const r = rows[0];
    if (r === undefined) return undefined;
    return r.raw === null ? { status: r.status } : { status: r.status, raw: r.raw };
  }

  async itemsByComment(route: string, commentIds: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (commentIds.length === 0) return out;
    const { rows } = await this.pool.query<{ comment_id: string; id: string }>(
      `SELECT o.comment_id, MAX(o.id) AS id FROM outbox_search s JOIN outbox o ON o.id = s.id
       WHERE s.s_comment_id = ANY($1::text[]) AND o.route = $2 GROUP BY o.comment_id`,
      [commentIds.map((c) => pgText(c.toLowerCase())), route],
    );
    for (const r of rows) out.set(r.comment_id, toId(r.id));
    return out;
  }

  async itemCounts(): Promise<ItemCount[]> {
    type Row = { route: string; adapter: string; state?: ItemListState; n: string };
    // One snapshot for the three counts, so that "delivered = the rest" holds.
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const num = (rows: Row[]) => rows.map((r) => ({ ...r, n: toId(r.n) }));
      const totals = num((await client.query<Row>(COUNT_SQL.totals)).rows);
      const open = num((await client.query<Row>(COUNT_SQL.open)).rows);
      const unchanged = num((await client.query<Row>(COUNT_SQL.unchanged)).rows);
      await client.query('COMMIT');
      return combineCounts(totals, [...open, ...unchanged]);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async attemptCounts(since: Date): Promise<AttemptCount[]> {
    const { rows } = await this.pool.query<{ route: string; outcome: ItemAttempt['outcome']; n: string }>(ATTEMPT_COUNTS_SQL, [since]);
    return rows.map((r) => ({ route: r.route, outcome: r.outcome, count: toId(r.n) }));
  }

  async aiUnitsByDay(since: string): Promise<DailyAiUnits[]> {
    const { rows } = await this.pool.query<{ route: string; day: string; units: string }>(
      'SELECT route, day, units FROM ai_units_daily WHERE day >= $1',
      [checkDay(since)],
    );
    return sortDaily(rows.map((r) => ({ route: r.route, day: r.day, units: toId(r.units) })));
  }
}
