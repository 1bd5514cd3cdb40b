/**
 * sync-raw-emails semantics: build each document's comment with mailgate's own preview code
 * and upsert it by comment id, counting new / updated / unchanged and the AI units billed.
 *
 * Documents are applied in request order, each against the state the previous ones left, so
 * the same email twice in one request counts once as new (or updated) and then as unchanged
 * (or updated again): the five counters always add up to the number of documents, and the
 * last copy is what stays stored.
 */
import type { Comment, RawEmailDocument, RawEmailHeaders, StoredComment, SyncCounts } from '../model/index.js';
import { buildComment, withThreadPosition } from '../preview/comment.js';
import { computeThreadProperties } from '../preview/threads.js';
import { unprocessable } from './http.js';

export interface IngestResult {
  counts: SyncCounts;
  /** AI units: new + updated_text_changed. */
  units: number;
  /** The comment as stored after each document, in document order. */
  perDocument: StoredComment[];
  /** The comments to store (last copy per id). */
  changed: StoredComment[];
}

/** The Message-ID header's value, trimmed, or undefined when the email has none. */
export function messageIdOf(headers: RawEmailHeaders): string | undefined {
  let value: string | undefined;
  if ('raw' in headers) {
    const unfolded = headers.raw.replace(/\r?\n[ \t]+/g, ' ');
    value = /^message-id[ \t]*:(.*)$/im.exec(unfolded)?.[1];
  } else {
    for (const [key, v] of Object.entries(headers.parsed)) {
      if (key.toLowerCase() === 'message-id') value = Array.isArray(v) ? v.join(',') : v;
    }
  }
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** JSON with object keys sorted, so that equal values compare equal. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

export interface Built {
  comment: Comment;
  /** The email has no usable date: its timestamp is the upload time, kept on later updates. */
  undated: boolean;
}

/** Builds the comments of a request; 422 when a document has neither comment_id nor Message-ID (if required). */
export function buildComments(documents: RawEmailDocument[], override: string[], requireId: boolean, receivedAt: Date): Built[] {
  return documents.map((doc, i) => {
    if (requireId && doc.comment_id === undefined && messageIdOf(doc.raw_email.headers) === undefined) {
      throw unprocessable(`documents[${i}]: no comment_id and no Message-ID header to derive the comment id from.`);
    }
    try {
      const { comment, warnings } = buildComment(doc, { override, receivedAt });
      return { comment, undated: warnings.some((w) => w.code === 'MAILGATE_WARN_DATE_MISSING') };
    } catch (err) {
      throw unprocessable(`documents[${i}]: the email cannot be turned into a comment: ${(err as Error).message}`);
    }
  });
}

function nonText(c: Comment): string {
  return canonicalJson({
    timestamp: c.timestamp,
    user_properties: c.user_properties,
    thread_id: c.thread_id ?? null,
    attachments: c.attachments ?? [],
  });
}

export interface UpsertSource {
  id: string;
  comment(id: string): StoredComment | undefined;
  thread(threadId: string): StoredComment[];
}

/** `number:Position in Thread`: the comment's position among the thread's comments known so far (stored or earlier in the request). */
function positioned(comment: Comment, source: UpsertSource, pending: PendingThreads, override: string[]): Comment {
  if (comment.thread_id === undefined) return comment;
  const members = new Map<string, Comment>();
  for (const c of source.thread(comment.thread_id)) members.set(c.id, c);
  for (const c of pending.get(comment.thread_id)?.values() ?? []) members.set(c.id, c);
  members.set(comment.id, comment);
  const position = computeThreadProperties([...members.values()]).get(comment.id)?.thread_position ?? 0;
  return withThreadPosition(comment, position, override);
}

/** thread id -> comment id -> comment, for the comments written earlier in the same request. */
type PendingThreads = Map<string, Map<string, StoredComment>>;

function remember(pending: PendingThreads, c: StoredComment): void {
  if (c.thread_id === undefined) return;
  let byId = pending.get(c.thread_id);
  if (!byId) pending.set(c.thread_id, (byId = new Map()));
  byId.set(c.id, c);
}

export function upsert(built: Built[], source: UpsertSource, override: string[], now: string): IngestResult {
  const counts: SyncCounts = { new: 0, updated: 0, updated_properties_only: 0, updated_text_changed: 0, unchanged: 0 };
  const pending = new Map<string, StoredComment>();
  const pendingThreads: PendingThreads = new Map();
  const perDocument = built.map(({ comment: fresh, undated }) => {
    const old = pending.get(fresh.id) ?? source.comment(fresh.id);
    const dated = undated && old !== undefined ? { ...fresh, timestamp: old.timestamp } : fresh;
    const comment = positioned(dated, source, pendingThreads, override);
    const textChanged = old !== undefined && canonicalJson(old.messages) !== canonicalJson(comment.messages);
    const otherChanged = old !== undefined && nonText(old) !== nonText(comment);
    if (old === undefined) counts.new += 1;
    else if (textChanged) counts.updated_text_changed += 1;
    else if (otherChanged) counts.updated_properties_only += 1;
    else counts.unchanged += 1;
    if (old !== undefined && !textChanged && !otherChanged) return old;
    const stored: StoredComment = {
      ...comment,
      attachments: comment.attachments ?? [],
      uid: `${source.id}.${comment.id}`,
      source_id: source.id,
      created_at: old?.created_at ?? now,
      last_modified: now,
    };
    pending.set(comment.id, stored);
    remember(pendingThreads, stored);
    return stored;
  });
  counts.updated = counts.updated_properties_only + counts.updated_text_changed;
  return { counts, units: counts.new + counts.updated_text_changed, perDocument, changed: [...pending.values()] };
}
