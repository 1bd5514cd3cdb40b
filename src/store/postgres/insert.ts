/**
 * The PostgreSQL enqueue's multi-row statement (keyed.ts): its text per shape, named
 * (prepared) for the first shapes within a budget of server memory, and its values.
 */
import type { Checkpoint } from '../../model/origin.js';
import type { SearchFields } from '../console.js';
import type { OutboxInput, ThreadEntry } from '../types.js';
import { checkpointUpsert } from './checkpoints.js';
import { SEARCH_PARAMS, searchInsert, searchValues } from './console.js';
import { COUNT_INSERTED } from './counters.js';
import { pgNow, pgText } from './db.js';
import { PARAMS_PER_ROW, inputParams } from './rows.js';
import { THREAD_PARAMS, threadUpsert } from './threads.js';

/** What the enqueue's statement writes besides the rows of its items. */
export interface InsertSteps {
  /** The search rows of the items (written for those the statement inserts). */
  search?: SearchFields[];
  /** Thread index entries, by source. */
  threads?: Array<[string, ThreadEntry[]]>;
  /** Add what the statement inserts to the routes' counters. */
  count?: boolean;
  checkpoint?: Checkpoint;
}

/**
 * One statement for `items` (at most 65534 / (PARAMS_PER_ROW + 1): PostgreSQL's parameter limit,
 * less the others'): the narrow outbox rows, then the document and raw side rows of those actually
 * inserted (a key already stored inserts nothing), and the `steps`: so that an enqueue is one
 * round trip to the server, and a transaction of its own when it has one statement.
 * `items` must hold each (route, key) once. Every value is its own parameter (the route one for
 * the statement when its items share it, as a pull call's do): raw bytes travel as
 * binary (no hex round trip) and JSON as plain text (no array-literal escaping).
 * `now` is `nowParam()`: the items' due time (null: the server's clock).
 *
 * The text depends only on the statement's shape (how many items, which steps), and the first
 * shapes are named (`name`): each connection then has the server parse it once and runs it again
 * with new values (a 500-row statement is ~75 KB of SQL and
 * ~5,500 parameters to parse and analyse every time otherwise).
 */
export function insertStatement(
  items: OutboxInput[],
  now: Date | null,
  steps: InsertSteps = {},
): { name?: string; text: string; values: unknown[] } {
  const route = items[0]?.route;
  const oneRoute = items.every((it) => it.route === route);
  const values: unknown[] = [];
  for (const it of items) {
    if (!oneRoute) values.push(pgText(it.route));
    values.push(...inputParams(it));
  }
  values.push(now);
  if (oneRoute) values.push(pgText(route ?? ''));
  const search = steps.search !== undefined && steps.search.length > 0;
  if (search) values.push(...searchValues(steps.search!));
  const threads = steps.threads === undefined ? undefined : threadUpsert(steps.threads, values.length + 1);
  if (threads !== undefined) values.push(...threads.values);
  if (steps.checkpoint !== undefined) values.push(steps.checkpoint.key, JSON.stringify(steps.checkpoint.value));
  const shape = {
    rows: items.length,
    oneRoute,
    search,
    threads: threads?.sql,
    count: steps.count === true,
    checkpoint: steps.checkpoint !== undefined,
  };
  return { ...enqueueStatements.of(shape), values };
}

/** What an enqueue statement's text depends on. */
interface Shape {
  rows: number;
  /** The items share one route, a parameter of the statement (else one of each row). */
  oneRoute: boolean;
  search: boolean;
  /** The thread step's SQL (its parameter numbers follow from the rest of the shape). */
  threads: string | undefined;
  count: boolean;
  checkpoint: boolean;
}

/**
 * Rows of the enqueue statements named (prepared) at most, all shapes together: a prepared
 * statement holds ~4.4 KB of server memory per row on each pool connection that ran it, so this
 * bounds that memory to ~4.5 MB a connection. Shapes first seen after the budget is spent are sent
 * unnamed (parsed every time, as any statement).
 */
export const PREPARED_ROWS = 1_024;

/**
 * The names of the enqueue statements by shape, given while the budget lasts. The text is built
 * again for every statement rather than kept: a kept 75 KB text made V8 run twice as many full
 * garbage collections over a heap holding the import's messages (measured: 7 vs 3 per 10k items).
 */
export class StatementShapes {
  private readonly names = new Map<string, string | undefined>();
  private prepared = 0;

  constructor(
    private readonly budget: number,
    private readonly prefix: string,
  ) {}

  of(shape: Shape): { name?: string; text: string } {
    const key = `${shape.rows}/${shape.oneRoute}/${shape.search}/${shape.threads !== undefined}/${shape.count}/${shape.checkpoint}`;
    const text = insertText(shape);
    if (!this.names.has(key)) {
      const name = this.prepared + shape.rows <= this.budget ? `${this.prefix}_${this.names.size}` : undefined;
      if (name !== undefined) this.prepared += shape.rows;
      if (name !== undefined || this.names.size < MAX_SHAPES) this.names.set(key, name);
    }
    const name = this.names.get(key);
    return name === undefined ? { text } : { name, text };
  }
}

/** Shapes remembered at most. */
const MAX_SHAPES = 64;

const enqueueStatements = new StatementShapes(PREPARED_ROWS, 'mailgate_enqueue');

function insertText({ rows: n, oneRoute, search, threads, count, checkpoint }: Shape): string {
  const rows: string[] = [];
  const stride = oneRoute ? PARAMS_PER_ROW : PARAMS_PER_ROW + 1;
  for (let r = 0; r < n; r++) {
    const b = r * stride + (oneRoute ? 0 : 1);
    const p = (i: number): string => `$${b + i}`;
    rows.push(
      `(${r}, ${oneRoute ? 'NULL' : `$${b}`}::text, ${p(1)}::text, ${p(2)}::text, ${p(3)}::json, ${p(4)}::json, ${p(5)}::json, ` +
        `${p(6)}::json, ${p(7)}::json, ${p(8)}::bytea, ${p(9)}::boolean, ${p(10)}::text, ${p(11)}::text)`,
    );
  }
  const nowAt = n * stride + 1;
  const routeAt = nowAt + 1;
  let next = oneRoute ? routeAt + 1 : routeAt;
  const extra: string[] = [];
  if (search) {
    extra.push(`srch AS (${searchInsert('ins', next)} ON CONFLICT (id) DO NOTHING)`);
    next += SEARCH_PARAMS;
  }
  if (threads !== undefined) {
    extra.push(`thr AS (${threads})`);
    next += THREAD_PARAMS;
  }
  if (count) extra.push(`cnt AS (${COUNT_INSERTED})`);
  if (checkpoint) extra.push(`cp AS (${checkpointUpsert(next)})`);
  // With one route, each row's route is NULL in `v` and the statement's parameter in the rows.
  const route = oneRoute ? `$${routeAt}::text` : 'v.route';
  const join = `JOIN v ON v.key = ins.key${oneRoute ? '' : ' AND v.route = ins.route'}`;
  return `WITH v (ord, route, key, comment_id, last_error, origin, warnings, document, preview, raw, action_due, text_hash, doc_hash) AS (
      VALUES ${rows.join(',\n')}),
    ins AS (
      INSERT INTO outbox (route, key, comment_id, status, finished_at, last_error, origin, warnings, action_due, next_attempt_at)
      SELECT ${route}, key, comment_id, CASE WHEN last_error IS NULL THEN 'queued' ELSE 'dead' END,
        CASE WHEN last_error IS NOT NULL THEN clock_timestamp() END, last_error, origin, warnings, action_due, ${pgNow(nowAt)}
      FROM v ORDER BY ord
      ON CONFLICT (route, key) DO NOTHING RETURNING id, route, key, status),
    docs AS (
      INSERT INTO outbox_docs (id, document, preview, text_hash, doc_hash)
      SELECT ins.id, v.document, v.preview, v.text_hash, v.doc_hash FROM ins ${join}),
    raws AS (
      INSERT INTO outbox_raw (id, raw)
      SELECT ins.id, v.raw FROM ins ${join} WHERE v.raw IS NOT NULL)${extra.map((e) => `,\n    ${e}`).join('')}
    SELECT ins.id, v.ord, ins.status FROM ins ${join}`;
}
