/** Row shapes of the PostgreSQL outbox (json columns arrive parsed) and their mapping. */
import type { Warning } from '../../errors.js';
import type { Comment, RawEmailDocument } from '../../model/index.js';
import type { Origin } from '../../pipeline/types.js';
import type { DeadLetter, DeadLetterDetail, ItemError, OutboxInput, OutboxItem } from '../types.js';
import { iso, pgText, toId } from './db.js';

export interface PgOutboxRow {
  id: string;
  route: string;
  key: string;
  comment_id: string;
  attempts: number;
  enqueued_at: Date;
  finished_at: Date | null;
  last_error: ItemError | null;
  origin: Origin;
  warnings: Warning[] | null;
  document: RawEmailDocument;
  preview: Comment | null;
  raw?: Buffer | null;
  has_raw?: boolean;
}

/** Columns a claim or listing returns (never the raw bytes). */
export const PG_ITEM_COLUMNS =
  'id, route, key, comment_id, attempts, enqueued_at, finished_at, last_error, origin, warnings, document, preview';

export function pgToItem(r: PgOutboxRow): OutboxItem {
  const item: OutboxItem = {
    id: toId(r.id),
    route: r.route,
    key: r.key,
    commentId: r.comment_id,
    document: r.document,
    origin: r.origin,
    warnings: r.warnings ?? [],
    attempts: r.attempts,
    enqueuedAt: iso(r.enqueued_at),
  };
  if (r.preview !== null) item.preview = r.preview;
  if (r.last_error !== null) item.lastError = r.last_error;
  return item;
}

export function pgToDeadLetter(r: PgOutboxRow): DeadLetter {
  return {
    id: toId(r.id),
    route: r.route,
    key: r.key,
    commentId: r.comment_id,
    origin: r.origin,
    error: r.last_error ?? { code: 'UNKNOWN', message: '' },
    attempts: r.attempts,
    enqueuedAt: iso(r.enqueued_at),
    deadAt: iso(r.finished_at ?? r.enqueued_at),
    warnings: r.warnings ?? [],
    hasRaw: r.raw !== undefined ? r.raw !== null : r.has_raw === true,
  };
}

export function pgToDeadLetterDetail(r: PgOutboxRow): DeadLetterDetail {
  const detail: DeadLetterDetail = { ...pgToDeadLetter(r), document: r.document };
  if (r.preview !== null) detail.preview = r.preview;
  if (r.raw !== null && r.raw !== undefined) detail.raw = r.raw;
  return detail;
}

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

/** Parameters per outbox row in a multi-row INSERT. */
export const PARAMS_PER_ROW = 11;

/**
 * One multi-row INSERT for `items` (at most 65535 / PARAMS_PER_ROW: PostgreSQL's parameter limit).
 * Every value is its own parameter: raw bytes travel as binary (no hex round trip) and
 * JSON as plain text (no array-literal escaping).
 */
export function insertStatement(items: OutboxInput[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const rows: string[] = [];
  for (const it of items) {
    const b = values.length;
    values.push(
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
    );
    const p = (i: number): string => `$${b + i}`;
    rows.push(`(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, CASE WHEN ${p(4)} = 'dead' THEN clock_timestamp() END, ${p(5)}::json, `
      + `${p(6)}::json, ${p(7)}::json, ${p(8)}::json, ${p(9)}::json, ${p(10)}::bytea, ${p(11)}::boolean)`);
  }
  const text = `INSERT INTO outbox (route, key, comment_id, status, finished_at, last_error, origin, warnings, document, preview, raw, action_due)
    VALUES ${rows.join(',\n')} ON CONFLICT (route, key) DO NOTHING RETURNING route, status`;
  return { text, values };
}
