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
import { iso, jsonRecords, pgNow, pgText, toId, type Queryable } from './db.js';

/**
 * A CTE step recording one attempt per row of the CTE `u` (columns id, route): `$o` the
 * outcome, `$c`/`$m` the error code and message, `$d` the delay, `$n` the clock parameter.
 */
export function attemptInsert(p: { outcome: string; code: string; message: string; delay: string; now: number }): string {
  return `INSERT INTO outbox_attempts (item_id, route, at, outcome, code, message, delay_ms)
    SELECT id, route, ${pgNow(p.now)}, ${p.outcome}::text, ${p.code}::text, ${p.message}::text, ${p.delay}::integer FROM u`;
}

/** Parameters of the search rows' insert (`searchValues`, `searchInsert`): one JSON array of the rows. */
export const SEARCH_PARAMS = 1;

/**
 * The search rows as one JSON array (`jsonRecords`, read with json_to_recordset): one native
 * call, where fourteen array literals took a pass over every value each. Absent (null, or
 * undefined in an input of a legacy origin shape that turns out a duplicate) is NULL.
 */
export function searchValues(rows: SearchFields[]): string[] {
  const json = jsonRecords(({ text }) => {
    const nul = (s: string | null | undefined): string | null => (s === null || s === undefined ? null : text(s));
    return rows.map((f) => ({
      route: text(f.route),
      key: text(f.key),
      adapter: text(f.adapter),
      account: nul(f.account),
      sender: nul(f.sender),
      sender_name: nul(f.senderName),
      subject: nul(f.subject),
      message_id: nul(f.messageId),
      msg_ts: f.timestamp === null ? null : new Date(f.timestamp).toISOString(),
      s_sender: nul(searchKey(f.sender)),
      s_name: nul(searchKey(f.senderName)),
      s_subject: nul(searchKey(f.subject)),
      s_message_id: nul(searchKey(f.messageId)),
      s_comment_id: text(f.commentId.toLowerCase()),
    }));
  });
  return [json];
}

/**
 * The search rows of the items among `rows` that `items` holds (`outbox`, or the inserted rows of
 * the enqueue's statement), matched by route and key; the JSON parameter is `$first`.
 */
export function searchInsert(items: string, first: number): string {
  return `INSERT INTO outbox_search (id, route, adapter, account, sender, sender_name, subject, message_id, msg_ts,
    s_sender, s_name, s_subject, s_message_id, s_comment_id)
  SELECT o.id, o.route, v.adapter, v.account, v.sender, v.sender_name, v.subject, v.message_id, v.msg_ts,
    v.s_sender, v.s_name, v.s_subject, v.s_message_id, v.s_comment_id
  FROM json_to_recordset($${first}::json) AS v (route text, key text, adapter text, account text, sender text, sender_name text,
    subject text, message_id text, msg_ts timestamptz, s_sender text, s_name text, s_subject text, s_message_id text, s_comment_id text)
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
    }>('SELECT at, outcome, code, message, delay_ms FROM outbox_attempts WHERE item_id = $1 ORDER BY at, ctid', [id]);
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
    const { rows } = await this.pool.query<{ route: string; outcome: ItemAttempt['outcome']; n: string }>(
      'SELECT route, outcome, COUNT(*) AS n FROM outbox_attempts WHERE at >= $1 GROUP BY route, outcome ORDER BY route, outcome',
      [since],
    );
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
