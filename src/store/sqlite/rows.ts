/** Row shapes of the SQLite outbox and their mapping to the contract's types. */
import type { Warning } from '../../errors.js';
import type { Comment, RawEmailDocument } from '../../model/index.js';
import { storedOrigin } from '../../model/origin.js';
import { hashesOf, jsonOrNull, LazyOutboxItem, parseItemError, parseJson, type ItemFields } from '../common.js';
import type { Body } from './kept-bodies.js';
import type { DeadLetter, DeadLetterDetail, OutboxInput, OutboxItem } from '../types.js';

export interface OutboxRow {
  id: number;
  route: string;
  key: string;
  comment_id: string;
  status: string;
  attempts: number;
  enqueued_at: number;
  finished_at: number | null;
  last_error: string | null;
  origin: string;
  warnings: string | null;
  has_raw?: number;
}

/** An `outbox_docs` row, joined to its outbox row by id; `raw` from `outbox_raw` when asked for. */
export interface DocRow {
  document: string;
  preview: string | null;
  text_hash?: string | null;
  doc_hash?: string | null;
  raw?: Buffer | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** What a claim reads of an `outbox_docs` row. */
export function bodyOf(d: DocRow): Body {
  return { document: d.document, preview: d.preview, hashes: hashesOf(d.text_hash, d.doc_hash) };
}

/** An outbox row and its body as a claimed item. */
export function toItem(r: OutboxRow, body: Body): OutboxItem {
  const fields: ItemFields = {
    id: r.id,
    route: r.route,
    key: r.key,
    commentId: r.comment_id,
    origin: r.origin,
    warnings: parseJson<Warning[]>(r.warnings) ?? [],
    attempts: r.attempts,
    enqueuedAt: iso(r.enqueued_at),
  };
  const lastError = parseItemError(r.last_error);
  if (lastError !== undefined) fields.lastError = lastError;
  return new LazyOutboxItem(fields, body.document, body.hashes, body.preview);
}

export function toDeadLetter(r: OutboxRow): DeadLetter {
  return {
    id: r.id,
    route: r.route,
    key: r.key,
    commentId: r.comment_id,
    origin: storedOrigin(JSON.parse(r.origin), r.key),
    error: parseItemError(r.last_error) ?? { code: 'UNKNOWN', message: '' },
    attempts: r.attempts,
    enqueuedAt: iso(r.enqueued_at),
    deadAt: iso(r.finished_at ?? r.enqueued_at),
    warnings: parseJson<Warning[]>(r.warnings) ?? [],
    hasRaw: r.has_raw === 1,
  };
}

export function toDeadLetterDetail(r: OutboxRow, d: DocRow): DeadLetterDetail {
  const detail: DeadLetterDetail = { ...toDeadLetter(r), document: JSON.parse(d.document) as RawEmailDocument };
  const preview = parseJson<Comment>(d.preview);
  if (preview !== undefined) detail.preview = preview;
  if (d.raw !== null && d.raw !== undefined) detail.raw = d.raw;
  return detail;
}

/** The columns an input fills, in the order of INSERT_COLUMNS. */
export function inputValues(item: OutboxInput, now: number): unknown[] {
  const dead = item.error !== undefined;
  return [
    item.route,
    item.key,
    item.commentId,
    dead ? 'dead' : 'queued',
    now,
    now,
    dead ? now : null,
    jsonOrNull(item.error),
    JSON.stringify(item.origin),
    item.warnings === undefined || item.warnings.length === 0 ? null : JSON.stringify(item.warnings),
    item.afterDelivery === true ? 1 : 0,
  ];
}

export const INSERT_COLUMNS =
  'route, key, comment_id, status, next_attempt_at, enqueued_at, finished_at, last_error, origin, warnings, action_due';

/** The INSERT of one input's outbox row (values: `inputValues`), ending in `tail` (a conflict clause, RETURNING). */
export function insertSql(tail: string): string {
  const params = INSERT_COLUMNS.split(',')
    .map(() => '?')
    .join(', ');
  return `INSERT INTO outbox (${INSERT_COLUMNS}) VALUES (${params}) ${tail}`;
}

/** The narrow outbox columns a claim or listing returns (document and preview come from `outbox_docs`). */
export const ITEM_COLUMNS = 'id, route, key, comment_id, status, attempts, enqueued_at, finished_at, last_error, origin, warnings';
