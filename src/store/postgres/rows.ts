/** Row shapes of the PostgreSQL outbox (json columns arrive parsed) and their mapping. */
import type { Warning } from '../../errors.js';
import type { Comment, RawEmailDocument } from '../../model/index.js';
import { storedOrigin } from '../../model/origin.js';
import type { DeadLetter, DeadLetterDetail, ItemError, OutboxInput, OutboxItem } from '../types.js';
import { hashesOf, LazyOutboxItem, type ItemFields } from '../common.js';
import { iso, pgText, toId } from './db.js';

export interface PgOutboxRow {
  id: string;
  route: string;
  key: string;
  comment_id: string;
  attempts: number;
  /** A claim has it as ISO-8601 text already. */
  enqueued_at: Date | string;
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
  const fields: ItemFields = {
    id: toId(r.id),
    route: r.route,
    key: r.key,
    commentId: r.comment_id,
    origin: storedOrigin(r.origin, r.key),
    warnings: r.warnings ?? [],
    attempts: r.attempts,
    enqueuedAt: typeof r.enqueued_at === 'string' ? r.enqueued_at : iso(r.enqueued_at),
  };
  if (r.last_error !== null) fields.lastError = r.last_error;
  const text = r.document_text ?? JSON.stringify(documentOf(r));
  const item = new LazyOutboxItem(fields, text, hashesOf(r.text_hash, r.doc_hash), null);
  if (r.preview !== null && r.preview !== undefined) item.preview = r.preview;
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
    enqueuedAt: typeof r.enqueued_at === 'string' ? r.enqueued_at : iso(r.enqueued_at),
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

/** Parameters per outbox row in a multi-row INSERT (its route is one parameter for the statement). */
export const PARAMS_PER_ROW = 11;

/**
 * An input's values in the order of the parameters of both insert statements (this module's and
 * push intake's), its route apart: key, comment_id, last_error, origin, warnings, document,
 * preview, raw, action_due, text_hash, doc_hash. The statement derives the status from
 * last_error ('dead' with one, else 'queued').
 */
export function inputParams(it: OutboxInput): unknown[] {
  return [
    pgText(it.key),
    pgText(it.commentId),
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
