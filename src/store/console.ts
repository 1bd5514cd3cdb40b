/**
 * What both stores share for the console's item list: the fields kept for search (the message's
 * facts, src/preview/facts.ts, stored at enqueue, so a list page or a search never parses a
 * document), the query checks, and the SQL conditions of the console states.
 *
 * Search is by prefix, case-insensitive (lower-cased at enqueue and in the query): an indexed
 * range scan per field, fast at millions of items. A substring search would scan every row.
 */
import { GatewayError } from '../errors.js';
import type { MessageFacts } from '../preview/facts.js';
import { storedOrigin } from '../model/origin.js';
import { byCodeUnits, checkLimit, parseItemError } from './common.js';
import type { DailyAiUnits, ItemCount, ItemError, ItemListState, ItemQuery, ItemSummary, OutboxInput } from './types.js';

/** Longest search string. */
export const MAX_SEARCH_CHARS = 256;
/**
 * Matches counted per search before choosing how to answer it: fewer, and the matches are read
 * from the search indexes and sorted by id; as many or more (a short, common prefix), and the
 * outbox is walked newest first until a page is full, which then ends early.
 */
export const SEARCH_PROBE_LIMIT = 5_000;

/** The lower-cased search columns of `outbox_search`, each indexed. */
export const SEARCH_COLUMNS = ['s_sender', 's_name', 's_subject', 's_message_id', 's_comment_id'] as const;

/**
 * SQL pieces of a search for a prefix between the parameters `lo` and `hi`: `probe` counts
 * matches (at most SEARCH_PROBE_LIMIT per column), `matches` selects the matching ids through the
 * indexes, `scan` is a row condition on `outbox_search s` that uses no index (`+` in SQLite
 * keeps the planner on the outbox's own order).
 */
export function searchSql(lo: string, hi: string, noIndex: '+' | ''): { probe: string; matches: string; scan: string } {
  const range = (c: string, p = ''): string => `${p}${c} >= ${lo} AND ${p}${c} < ${hi}`;
  return {
    probe: SEARCH_COLUMNS.map(
      (c) => `(SELECT COUNT(*) FROM (SELECT 1 FROM outbox_search WHERE ${range(c)} LIMIT ${SEARCH_PROBE_LIMIT}) p)`,
    ).join(' + '),
    matches: SEARCH_COLUMNS.map((c) => `SELECT id FROM outbox_search WHERE ${range(c)}`).join(' UNION '),
    scan: `(${SEARCH_COLUMNS.map((c) => `(${range(`s.${c}`, noIndex)})`).join(' OR ')})`,
  };
}

/** Days `aiUnitsByDay` callers ask for at most (the console shows 14). */
export const MAX_UNIT_DAYS = 366;

export const ITEM_LIST_STATES: readonly ItemListState[] = ['queued', 'retrying', 'delivered', 'unchanged', 'dead'];

/** The values stored beside an item for the console's list and search, with the item's route, key and comment id. */
export interface SearchFields extends MessageFacts {
  route: string;
  key: string;
  commentId: string;
  adapter: string;
  account: string | null;
}

/**
 * The facts module (src/preview/facts.ts, and the MIME header readers under it), loaded on first
 * use: intake hands every input over with its facts, so a store opened by `status`, the console
 * or delivery never loads the preview or MIME code.
 */
let facts: typeof import('../preview/facts.js') | undefined;

/**
 * Runs `write` once `searchFields` can answer for every input: at once, unless one comes without
 * its facts (the library, tests, a replayed dead letter) before the facts module was loaded.
 */
export function withSearchFields<T>(items: readonly OutboxInput[], write: () => T): T | Promise<Awaited<T>> {
  if (facts !== undefined || items.every((i) => i.facts !== undefined)) return write();
  return import('../preview/facts.js').then(async (m): Promise<Awaited<T>> => {
    facts = m;
    return await write();
  });
}

/**
 * The search fields of an input: the facts intake computed in the parse worker, or, for a caller
 * that hands over only a document (the library, tests), computed from it. Either way the stores
 * call this before their write transaction opens, never inside it, and within
 * `withSearchFields`, which has loaded what computes them.
 */
export function searchFields(item: OutboxInput): SearchFields {
  const { route, key, commentId, origin } = item;
  return {
    route,
    key,
    commentId,
    adapter: origin.adapter,
    account: origin.instance === '' ? null : origin.instance,
    ...(item.facts ?? factsOf(item)),
  };
}

function factsOf(item: OutboxInput): MessageFacts {
  if (facts === undefined) throw new Error('searchFields: an input without facts outside withSearchFields');
  return facts.messageFacts(item.document);
}

/** Lower case for search columns and queries (the same function on both sides). */
export const searchKey = (s: string | null): string | null => (s === null ? null : s.toLowerCase());

/**
 * The upper bound of a prefix range: every string starting with `prefix` sorts below it in
 * binary (code point) order. U+10FFFF is the largest code point.
 */
export const prefixEnd = (prefix: string): string => `${prefix}\u{10FFFF}`;

function invalid(message: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_STORE_INVALID_ARGUMENT', message);
}

/** Checks a query; returns the lower-cased search string (undefined when none). */
export function checkItemQuery(q: ItemQuery): string | undefined {
  checkLimit(q.limit);
  if (q.state !== undefined && !ITEM_LIST_STATES.includes(q.state)) throw invalid(`unknown item state ${String(q.state)}`);
  if (q.beforeId !== undefined && (!Number.isSafeInteger(q.beforeId) || q.beforeId < 1)) throw invalid('beforeId must be a positive id');
  if (q.account !== undefined && q.adapter === undefined) throw invalid('account needs adapter');
  for (const d of [q.since, q.until]) if (d !== undefined && Number.isNaN(d.getTime())) throw invalid('since/until must be valid dates');
  if (q.q === undefined) return undefined;
  const s = q.q.trim().toLowerCase().replace(/^<|>$/g, '');
  if (s.length < 1 || s.length > MAX_SEARCH_CHARS) throw invalid(`q must hold 1 to ${MAX_SEARCH_CHARS} characters`);
  return s;
}

/** The console state of an outbox row, in SQL (columns `status`, `attempts`, `outcome` of alias `o`). */
export const STATE_SQL = `CASE o.status WHEN 'queued' THEN CASE WHEN o.attempts > 0 THEN 'retrying' ELSE 'queued' END
  WHEN 'delivered' THEN CASE WHEN o.outcome = 'unchanged' THEN 'unchanged' ELSE 'delivered' END ELSE 'dead' END`;

/** The SQL condition selecting one console state (served by the (status, id) indexes). */
export function stateCondition(state: ItemListState): string {
  switch (state) {
    case 'queued':
      return `o.status = 'queued' AND o.attempts = 0`;
    case 'retrying':
      return `o.status = 'queued' AND o.attempts > 0`;
    case 'delivered':
      return `o.status = 'delivered' AND COALESCE(o.outcome, '') <> 'unchanged'`;
    case 'unchanged':
      return `o.status = 'delivered' AND o.outcome = 'unchanged'`;
    case 'dead':
      return `o.status = 'dead'`;
  }
}

/** The columns of a console list row (outbox `o` joined to its search row `s`). */
export const LIST_COLUMNS = `o.id, o.route, o.key, o.comment_id, o.status, o.attempts, o.outcome, o.origin, o.enqueued_at,
  o.next_attempt_at, o.finished_at, o.last_error, s.sender, s.sender_name, s.subject, s.message_id, s.msg_ts`;

/** A row of LIST_COLUMNS as either driver returns it: times as Unix ms or Date, JSON as text or parsed, ids as numbers or bigint strings. */
export interface ListRow {
  id: number | string;
  route: string;
  key: string;
  comment_id: string;
  status: string;
  attempts: number;
  outcome: string | null;
  origin: unknown;
  enqueued_at: number | Date;
  next_attempt_at: number | Date;
  finished_at: number | Date | null;
  last_error: string | ItemError | null;
  sender: string | null;
  sender_name: string | null;
  subject: string | null;
  message_id: string | null;
  msg_ts: number | Date | null;
}

const iso = (t: number | Date): string => new Date(t).toISOString();

export function toSummary(r: ListRow): ItemSummary {
  const s: ItemSummary = {
    id: Number(r.id),
    route: r.route,
    key: r.key,
    commentId: r.comment_id,
    state: stateOf(r.status, r.attempts, r.outcome),
    origin: storedOrigin(typeof r.origin === 'string' ? JSON.parse(r.origin) : r.origin, r.key),
    attempts: r.attempts,
    enqueuedAt: iso(r.enqueued_at),
  };
  if (r.status === 'queued') s.nextAttemptAt = iso(r.next_attempt_at);
  if (r.finished_at !== null) s.finishedAt = iso(r.finished_at);
  const err = typeof r.last_error === 'string' ? parseItemError(r.last_error) : (r.last_error ?? undefined);
  if (err !== undefined) s.lastError = err;
  if (r.sender !== null) s.sender = r.sender;
  if (r.sender_name !== null) s.senderName = r.sender_name;
  if (r.subject !== null) s.subject = r.subject;
  if (r.message_id !== null) s.messageId = r.message_id;
  if (r.msg_ts !== null) s.timestamp = iso(r.msg_ts);
  return s;
}

/** The outcome of a delivered outbox row `o` as its attempt (SQL): a delivery writes no attempts row, the item's row holds it. */
export const DELIVERED_OUTCOME = `COALESCE(outcome, 'delivered')`;

/** The state of a row read back. */
export function stateOf(status: string, attempts: number, outcome: string | null): ItemListState {
  if (status === 'queued') return attempts > 0 ? 'retrying' : 'queued';
  if (status === 'delivered') return outcome === 'unchanged' ? 'unchanged' : 'delivered';
  return 'dead';
}

/**
 * Item counts without reading every item: totals per route and adapter from the search rows'
 * index, the queued and dead items (few, through their index) and the unchanged ones (through
 * a partial index) by state; delivered is the rest.
 */
export const COUNT_SQL = {
  totals: 'SELECT route, adapter, COUNT(*) AS n FROM outbox_search GROUP BY route, adapter',
  open: `SELECT s.route, s.adapter, ${STATE_SQL} AS state, COUNT(*) AS n FROM outbox o JOIN outbox_search s ON s.id = o.id
    WHERE o.status IN ('queued', 'dead') GROUP BY 1, 2, 3`,
  unchanged: `SELECT s.route, s.adapter, 'unchanged' AS state, COUNT(*) AS n FROM outbox o JOIN outbox_search s ON s.id = o.id
    WHERE o.status = 'delivered' AND o.outcome = 'unchanged' GROUP BY 1, 2`,
};

type CountRow = { route: string; adapter: string; state?: ItemListState; n: number };

/** The counts of COUNT_SQL's three answers, sorted by route, adapter and state, zeros left out. */
export function combineCounts(totals: CountRow[], parts: CountRow[]): ItemCount[] {
  const key = (r: { route: string; adapter: string }): string => JSON.stringify([r.route, r.adapter]);
  const out = new Map<string, ItemCount>();
  const rest = new Map<string, number>(totals.map((t) => [key(t), t.n]));
  for (const p of parts) {
    out.set(JSON.stringify([p.route, p.adapter, p.state]), { route: p.route, adapter: p.adapter, state: p.state!, count: p.n });
    rest.set(key(p), (rest.get(key(p)) ?? 0) - p.n);
  }
  for (const t of totals) {
    const n = rest.get(key(t)) ?? 0;
    if (n > 0)
      out.set(JSON.stringify([t.route, t.adapter, 'delivered']), { route: t.route, adapter: t.adapter, state: 'delivered', count: n });
  }
  return [...out.values()]
    .filter((c) => c.count > 0)
    .sort((a, b) => byCodeUnits(a.route, b.route) || byCodeUnits(a.adapter, b.adapter) || byCodeUnits(a.state, b.state));
}

/** The UTC day of an instant, `YYYY-MM-DD`. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export function checkDay(day: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) throw invalid(`not a day: ${day}`);
  return day;
}

/** Sorted for stable answers. */
export function sortDaily(rows: DailyAiUnits[]): DailyAiUnits[] {
  return rows.sort((a, b) => (a.route === b.route ? a.day.localeCompare(b.day) : a.route < b.route ? -1 : 1));
}
