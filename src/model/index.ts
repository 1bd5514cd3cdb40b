/**
 * The API's shapes as zod schemas (spec: Resources; notes §2-§5).
 * Types are inferred from the schemas, so the validator and the type never disagree.
 */
import { z } from 'zod';
import {
  MAX_ATTACHMENTS,
  MAX_ATTACHMENT_FIELD_CHARS,
  MAX_COMMENT_ID_CHARS,
  MAX_HTML_CHARS,
  MAX_RAW_HEADER_CHARS,
  MAX_TEXT_CHARS,
  MAX_TIMESTAMP_MS,
  MIN_TIMESTAMP_MS,
} from '../limits.js';
import { HEX_ID_RE, isValidPropertyName, PROPERTY_KEY_RE } from './names.js';

export * from './names.js';

/** spec Comment.id and thread_id: lowercase hex, 1 to 1024 characters (names.ts isHexId). */
export const HexId = z.string().regex(HEX_ID_RE, 'must be lowercase hexadecimal').min(1).max(MAX_COMMENT_ID_CHARS);

export const UserProperties = z.record(z.string(), z.union([z.string(), z.number()])).superRefine((props, ctx) => {
  for (const [key, value] of Object.entries(props)) {
    const m = PROPERTY_KEY_RE.exec(key);
    if (!m || !isValidPropertyName(m[2]!)) {
      ctx.addIssue({ code: 'custom', path: [key], message: `invalid user property key "${key}"` });
      continue;
    }
    const want = m[1] === 'string' ? 'string' : 'number';
    if (typeof value !== want || (want === 'number' && !Number.isFinite(value))) {
      ctx.addIssue({ code: 'custom', path: [key], message: `value of "${key}" must be a ${want}` });
    }
  }
});
export type UserProperties = Record<string, string | number>;

export const Attachment = z.object({
  name: z.string().max(MAX_ATTACHMENT_FIELD_CHARS),
  size: z.number().int().nonnegative(),
  content_type: z.string().max(MAX_ATTACHMENT_FIELD_CHARS),
});
export type Attachment = z.infer<typeof Attachment>;

export const RawEmailHeaders = z.union([
  z.object({ raw: z.string().max(MAX_RAW_HEADER_CHARS) }).strict(),
  z.object({ parsed: z.record(z.string().regex(/^[\x21-\x39\x3b-\x7e]+$/), z.union([z.string(), z.array(z.string())])) }).strict(),
]);
export type RawEmailHeaders = { raw: string } | { parsed: Record<string, string | string[]> };

export const RawEmailBody = z.union([
  z.object({ plain: z.string().max(MAX_TEXT_CHARS) }).strict(),
  z.object({ html: z.string().max(MAX_HTML_CHARS) }).strict(),
]);
export type RawEmailBody = { plain: string } | { html: string };

export const RawEmail = z.object({
  headers: RawEmailHeaders,
  body: RawEmailBody,
  attachments: z.array(Attachment).max(MAX_ATTACHMENTS).optional(),
});
export type RawEmail = z.infer<typeof RawEmail>;

/** One element of `documents` in sync-raw-emails and predict-raw-emails. */
export const RawEmailDocument = z.object({
  raw_email: RawEmail,
  comment_id: HexId.optional(),
  user_properties: UserProperties.optional(),
});
export type RawEmailDocument = z.infer<typeof RawEmailDocument>;

/** ISO-8601 within the spec's range (1950-01-01T00:00:00Z .. 2049-12-31T23:59:59Z). */
export const Timestamp = z.string().refine((s) => {
  const t = Date.parse(s);
  return Number.isFinite(t) && t >= MIN_TIMESTAMP_MS && t <= MAX_TIMESTAMP_MS;
}, 'must be ISO-8601 between 1950-01-01T00:00:00Z and 2049-12-31T23:59:59Z');

export const Content = z.object({ text: z.string().max(MAX_TEXT_CHARS), translated_from: z.string().max(MAX_TEXT_CHARS).optional() });
export type Content = z.infer<typeof Content>;

/** spec Message. Absent fields are unset, never null or empty. */
export const Message = z.object({
  body: Content,
  subject: Content.optional(),
  signature: Content.optional(),
  from: z.string().min(1).optional(),
  to: z.array(z.string().min(1)).min(1).optional(),
  cc: z.array(z.string().min(1)).min(1).optional(),
  bcc: z.array(z.string().min(1)).min(1).optional(),
  sent_at: Timestamp.optional(),
  language: z.string().optional(),
});
export type Message = z.infer<typeof Message>;

/** The comment the service builds from a raw email (what `include_comments` returns, less service fields). */
export const Comment = z.object({
  id: HexId,
  timestamp: Timestamp,
  messages: z.array(Message),
  user_properties: UserProperties,
  thread_id: HexId.optional(),
  attachments: z.array(Attachment).optional(),
});
export type Comment = z.infer<typeof Comment>;

/** spec Thread properties. */
export const ThreadProperties = z.object({
  thread_position: z.number().int().nonnegative(),
  num_messages: z.number().int().positive(),
  num_participants: z.number().int().nonnegative(),
  first_sender: z.string().nullable(),
  duration: z.number().nullable(),
  response_time: z.number().nullable(),
});
export type ThreadProperties = z.infer<typeof ThreadProperties>;

/** A stored comment as the service returns it (notes §5.1). */
export interface StoredComment extends Comment {
  uid: string;
  source_id: string;
  created_at: string;
  last_modified: string;
  text_format?: 'plain' | 'markdown';
}

// --- requests and responses ------------------------------------------------------------

export const Threshold = z.union([z.number().min(0).max(1), z.literal('auto')]);
export const LabelThreshold = z.object({
  name: z.array(z.string().min(1).max(64)).min(1).max(64).describe('Label path, one element per level: [Parent, Child].'),
  threshold: z.number().min(0).max(1).optional().describe('Threshold for this label, overriding the top-level one.'),
});
export type LabelThreshold = z.infer<typeof LabelThreshold>;

export interface SyncRawEmailsRequest {
  documents: RawEmailDocument[];
  transform_tag: string;
  include_comments?: boolean;
  override_user_properties?: string[];
}

/** What a sync-raw-emails request did with its documents (updated = properties only + text changed). */
export interface SyncCounts {
  new: number;
  updated: number;
  updated_properties_only: number;
  updated_text_changed: number;
  unchanged: number;
}

export interface SyncRawEmailsResponse extends SyncCounts {
  status: 'ok';
  comments?: StoredComment[];
}

export interface PredictRawEmailsRequest {
  documents: RawEmailDocument[];
  transform_tag: string;
  threshold?: number | 'auto';
  labels?: LabelThreshold[];
  include_comments?: boolean;
}

export interface PredictedLabel {
  name: string[];
  probability: number;
  sentiment?: number;
}

export interface PredictRawEmailsResponse {
  status: 'ok';
  predictions: PredictedLabel[][];
  entities?: unknown[][];
  label_properties?: unknown[][];
  model: { version: number; time: string } | null;
  comments?: Comment[];
}

export interface ErrorResponse {
  status: 'error';
  message: string;
}
