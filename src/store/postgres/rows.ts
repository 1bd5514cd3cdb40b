/** Row shapes of the PostgreSQL outbox (json columns arrive parsed) and their mapping. */
import type { Warning } from '../../errors.js';
import type { Comment, RawEmailDocument } from '../../model/index.js';
import { storedOrigin } from '../../model/origin.js';
import type { Checkpoint } from '../../model/origin.js';
import type { SearchFields } from '../console.js';
import type { DeadLetter, DeadLetterDetail, ItemError, OutboxInput, OutboxItem, ThreadEntry } from '../types.js';
import { hashesOf, withDocument } from '../common.js';
import { checkpointUpsert } from './checkpoints.js';
import { searchInsert, searchValues } from './console.js';
import { COUNT_INSERTED } from './counters.js';
import { iso, pgNow, pgText, toId } from './db.js';
import { threadUpsert } from './threads.js';

export interface PgOutboxRow {
  id: string;
  route: string;
  key: string;
  comment_id: string;
  attempts: number;
  enqueued_at: Date;
  finished_at: Date | null;
  last_error: ItemError | null;
  /** As stored: the shape of the version that wrote it (storedOrigin reads either). */
  origin: unknown;
  warnings: Warning[] | null;
  /** From `outbox_docs` (claims and `getDeadLetter`): parsed, or as text (`document_text`). */
  document?: RawEmailDocument;
  document_text?: string;
  text_hash?: string | null;
  doc_hash?: string | null;
  preview?: Comment | null;
  /** From `outbox_raw` (`getDeadLetter`). */
  raw?: Buffer | null;
  has_raw?: boolean;
}

/** The narrow outbox columns a claim or listing returns (document and preview live in `outbox_docs`). */
export const PG_ITEM_COLUMNS = 'id, route, key, comment_id, attempts, enqueued_at, finished_at, last_error, origin, warnings';

function documentOf(r: PgOutboxRow): RawEmailDocument {
  if (r.document === undefined) throw new Error(`outbox item ${r.id} has no document row`);
  return r.document;
}

export function pgToItem(r: PgOutboxRow): OutboxItem {
  const base = {
    id: toId(r.id),
    route: r.route,
    key: r.key,
    commentId: r.comment_id,
    origin: storedOrigin(r.origin, r.key),
    warnings: r.warnings ?? [],
    attempts: r.attempts,
    enqueuedAt: iso(r.enqueued_at),
  };
  const text = r.document_text ?? JSON.stringify(documentOf(r));
  const item = withDocument(base, text, hashesOf(r.text_hash, r.doc_hash));
  if (r.preview !== null && r.preview !== undefined) item.preview = r.preview;
  if (r.last_error !== null) item.lastError = r.last_error;
  return item;
}

export function pgToDeadLetter(r: PgOutboxRow): DeadLetter {
  return {
    id: toId(r.id),
    route: r.route,
    key: r.key,
    commentId: r.comment_id,
    origin: storedOrigin(r.origin, r.key),
    error: r.last_error ?? { code: 'UNKNOWN', message: '' },
    attempts: r.attempts,
    enqueuedAt: iso(r.enqueued_at),
    deadAt: iso(r.finished_at ?? r.enqueued_at),
    warnings: r.warnings ?? [],
    hasRaw: r.has_raw === true,
  };
}

export function pgToDeadLetterDetail(r: PgOutboxRow): DeadLetterDetail {
  const detail: DeadLetterDetail = { ...pgToDeadLetter(r), document: documentOf(r) };
  if (r.preview !== null && r.preview !== undefined) detail.preview = r.preview;
  if (r.raw !== null && r.raw !== undefined) detail.raw = r.raw;
  return detail;
}

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

/** Parameters per outbox row in a multi-row INSERT. */
export const PARAMS_PER_ROW = 13;

/**
 * An input's values in the order of the parameters of both insert statements (this module's and
 * push intake's): route, key, comment_id, status, last_error, origin, warnings, document,
 * preview, raw, action_due, text_hash, doc_hash.
 */
export function inputParams(it: OutboxInput): unknown[] {
  return [
    pgText(it.route),
    pgText(it.key),
    pgText(it.commentId),
    it.error === undefined ? 'queued' : 'dead',
    json(it.error),
    JSON.stringify(it.origin),
    it.warnings === undefined || it.warnings.length === 0 ? null : JSON.stringify(it.warnings),
    it.json?.document ?? JSON.stringify(it.document),
    it.json === undefined ? json(it.preview) : (it.json.preview ?? null),
    it.raw ?? null,
    it.afterDelivery === true,
    it.hashes?.textHash ?? null,
    it.hashes?.docHash ?? null,
  ];
}

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
 * One statement for `items` (at most 65534 / PARAMS_PER_ROW: PostgreSQL's parameter limit, less
 * the others'): the narrow outbox rows, then the document and raw side rows of those actually
 * inserted (a key already stored inserts nothing), and the `steps`: so that an enqueue is one
 * round trip to the server, and a transaction of its own when it has one statement.
 * `items` must hold each (route, key) once. Every value is its own parameter: raw bytes travel as
 * binary (no hex round trip) and JSON as plain text (no array-literal escaping).
 * `now` is `nowParam()`: the items' due time (null: the server's clock).
 */
export function insertStatement(items: OutboxInput[], now: Date | null, steps: InsertSteps = {}): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const rows: string[] = [];
  for (const it of items) {
    const b = values.length;
    values.push(...inputParams(it));
    const p = (i: number): string => `$${b + i}`;
    rows.push(
      `(${rows.length}, ${p(1)}::text, ${p(2)}::text, ${p(3)}::text, ${p(4)}::text, ${p(5)}::json, ` +
        `${p(6)}::json, ${p(7)}::json, ${p(8)}::json, ${p(9)}::json, ${p(10)}::bytea, ${p(11)}::boolean, ${p(12)}::text, ${p(13)}::text)`,
    );
  }
  values.push(now);
  const nowAt = values.length;
  const extra: string[] = [];
  if (steps.search !== undefined && steps.search.length > 0) {
    extra.push(`srch AS (${searchInsert('ins', values.length + 1)} ON CONFLICT (id) DO NOTHING)`);
    values.push(...searchValues(steps.search));
  }
  const threads = steps.threads === undefined ? undefined : threadUpsert(steps.threads, values.length + 1);
  if (threads !== undefined) {
    extra.push(`thr AS (${threads.sql})`);
    values.push(...threads.values);
  }
  if (steps.count === true) extra.push(`cnt AS (${COUNT_INSERTED})`);
  if (steps.checkpoint !== undefined) {
    extra.push(`cp AS (${checkpointUpsert(values.length + 1)})`);
    values.push(steps.checkpoint.key, JSON.stringify(steps.checkpoint.value));
  }
  const text = `WITH v (ord, route, key, comment_id, status, last_error, origin, warnings, document, preview, raw, action_due, text_hash, doc_hash) AS (
      VALUES ${rows.join(',\n')}),
    ins AS (
      INSERT INTO outbox (route, key, comment_id, status, finished_at, last_error, origin, warnings, action_due, next_attempt_at)
      SELECT route, key, comment_id, status, CASE WHEN status = 'dead' THEN clock_timestamp() END, last_error, origin, warnings, action_due,
        ${pgNow(nowAt)}
      FROM v ORDER BY ord
      ON CONFLICT (route, key) DO NOTHING RETURNING id, route, key, status),
    docs AS (
      INSERT INTO outbox_docs (id, document, preview, text_hash, doc_hash)
      SELECT ins.id, v.document, v.preview, v.text_hash, v.doc_hash FROM ins JOIN v ON v.route = ins.route AND v.key = ins.key),
    raws AS (
      INSERT INTO outbox_raw (id, raw)
      SELECT ins.id, v.raw FROM ins JOIN v ON v.route = ins.route AND v.key = ins.key WHERE v.raw IS NOT NULL)${extra.map((e) => `,\n    ${e}`).join('')}
    SELECT id, route, key, status FROM ins`;
  return { text, values };
}
