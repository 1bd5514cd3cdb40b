/**
 * One item for the console (`GET /api/items/:id`): the comment as the service builds it from the
 * stored document (with the body cut into text, quote and signature spans), the raw message
 * summarized from the kept bytes (headers, MIME tree, attachment list — never attachment bytes),
 * the delivery attempts, predictions and the thread across everything ingested.
 */
import type { RouteConfig } from '../config/schema.js';
import { MAX_TEXT_CHARS } from '../limits.js';
import { decodeWords } from '../mime/encoded-words.js';
import { splitHeader } from '../mime/header-split.js';
import { expand, makePart, type MimePart, type ParseContext } from '../mime/structure.js';
import type { Comment, RawEmailDocument } from '../model/index.js';
import { routeTarget } from '../pipeline/origin.js';
import { threadInIndex } from '../pipeline/thread-index.js';
import { buildComment, computeThreadProperties, documentHeaders, documentText, isGeneratedName, splitReply } from '../preview/index.js';
import { itemRow } from '../server/console-rows.js';
import { threadView } from './console-thread.js';
import type { AttemptView, BodySpan, CommentView, DocumentCut, ItemDetail, MimePartView, RawSummary } from '../server/console-types.js';
import type { ItemAttempt, Store, StoredItem } from '../store/types.js';

/** Raw messages larger than this are summarized from the stored document only (a page, not a parser run). */
export const MAX_SUMMARY_RAW_BYTES = 32 * 1024 * 1024;
/**
 * Characters of an HTML body converted to text for a view, on the service's thread. The text sent
 * is at most MAX_TEXT_CHARS; twice that in HTML holds it for all but markup-heavy mail, and keeps
 * a view of a hostile body (10 MB of `&amp;`) to milliseconds instead of seconds.
 */
export const MAX_VIEW_HTML_CHARS = 2 * MAX_TEXT_CHARS;

/**
 * Cuts `text` into spans by lines: lines of the kept body are `text`, lines of the signature
 * `signature`, the rest (quoted history, splitters) `quote`. Matching is in order, on lines
 * with trailing blanks removed, the way the reply split tidies them.
 */
export function bodySpans(text: string, body: string, signature: string | undefined): BodySpan[] {
  const want: Array<{ line: string; kind: BodySpan['kind'] }> = [
    ...body.split('\n').map((line) => ({ line: line.trimEnd(), kind: 'text' as const })),
    ...(signature === undefined ? [] : signature.split('\n').map((line) => ({ line: line.trimEnd(), kind: 'signature' as const }))),
  ].filter((w) => w.line !== '');
  const spans: BodySpan[] = [];
  let next = 0;
  let at = 0;
  const push = (kind: BodySpan['kind'], start: number, end: number): void => {
    const last = spans.at(-1);
    if (last && last.kind === kind && last.end === start) last.end = end;
    else if (end > start) spans.push({ kind, start, end });
  };
  for (const line of text.split('\n')) {
    const end = at + line.length + 1;
    const trimmed = line.trimEnd();
    const w = want[next];
    let kind: BodySpan['kind'];
    if (w !== undefined && trimmed === w.line) {
      kind = w.kind;
      next += 1;
    } else if (trimmed.trim() === '') kind = spans.at(-1)?.kind ?? 'text';
    else kind = 'quote';
    push(kind, at, Math.min(end, text.length));
    at = end;
  }
  return spans;
}

/**
 * The document as a view reads and shows it: a plain body whole (at most MAX_TEXT_CHARS), an
 * HTML body cut to MAX_VIEW_HTML_CHARS. The answer never carries the whole of a large HTML body
 * (up to 32 MiB of characters): serializing it for every view of a hostile item held the server
 * for tens of milliseconds and hundreds of megabytes; `document_cut` says what was left out, and
 * the original bytes stay downloadable.
 */
function viewDocument(doc: RawEmailDocument): { doc: RawEmailDocument; cut: DocumentCut | null } {
  const b = doc.raw_email.body;
  if ('plain' in b || b.html.length <= MAX_VIEW_HTML_CHARS) return { doc, cut: null };
  const html = b.html.slice(0, MAX_VIEW_HTML_CHARS);
  return {
    doc: { ...doc, raw_email: { ...doc.raw_email, body: { html } } },
    cut: { field: 'raw_email.body.html', chars: b.html.length, shown_chars: html.length },
  };
}

function isParsed(doc: RawEmailDocument): boolean {
  return 'raw' in doc.raw_email.headers ? doc.raw_email.headers.raw !== '' : true;
}

async function commentView(
  store: Store,
  item: StoredItem,
  doc: RawEmailDocument,
  route: RouteConfig | undefined,
): Promise<CommentView | null> {
  if (!isParsed(doc)) return null;
  const built: Comment = item.preview ?? buildComment(doc, { override: route?.override_user_properties ?? [] }).comment;
  const placed =
    route === undefined
      ? { comment: built, thread: computeThreadProperties([built]).get(built.id) ?? null }
      : await threadInIndex(store, routeTarget(route), built);
  const text = documentText(doc);
  const split = splitReply(text);
  return {
    comment: placed.comment,
    body_text: text,
    spans: bodySpans(text, split.body, split.signature),
    generated_properties: Object.keys(placed.comment.user_properties)
      .map((k) => k.replace(/^(string|number):/, ''))
      .filter(isGeneratedName),
    thread_properties: placed.thread,
  };
}

function partView(p: MimePart, path: string): MimePartView {
  const v: MimePartView = { content_type: p.type, part: path };
  if (p.params.charset !== undefined) v.charset = p.params.charset;
  if (p.encoding !== 'identity') v.transfer_encoding = p.encoding;
  if (p.disposition !== undefined) v.disposition = p.disposition;
  if (p.name !== undefined) v.filename = decodeWords(p.name);
  if (p.children === undefined) v.size = p.omittedSize ?? p.end - p.start;
  else v.children = p.children.map((c, i) => partView(c, path === '' ? String(i + 1) : `${path}.${i + 1}`));
  return v;
}

/**
 * Headers and the MIME tree from the raw bytes, never their content: the header blocks and
 * boundaries are found (linear in the bytes, at most MAX_MIME_PARTS parts), nothing is decoded.
 * The attachment list is the one the parse worker computed into the stored document: a view
 * never parses a message on the service's thread (a body of 10 MB of HTML entities took seconds).
 */
function fromRaw(raw: Buffer, doc: RawEmailDocument): Pick<RawSummary, 'headers' | 'parts' | 'attachments'> {
  const head = splitHeader(raw, 0, raw.length);
  const ctx: ParseContext = { buf: raw, parts: 1, warnings: [], limitWarned: false };
  const root = makePart(head.fields, head.bodyStart, raw.length, 'text/plain');
  expand(ctx, root, 0);
  return {
    headers: head.fields.map((f) => ({ name: f.name, value: f.value })),
    parts: partView(root, ''),
    attachments: fromDocument(doc).attachments,
  };
}

function fromDocument(doc: RawEmailDocument): Pick<RawSummary, 'headers' | 'parts' | 'attachments'> {
  return {
    headers: documentHeaders(doc).map((f) => ({ name: f.name, value: f.value })),
    parts: null,
    attachments: (doc.raw_email.attachments ?? []).map((a) => ({ name: a.name ?? null, content_type: a.content_type, size: a.size })),
  };
}

async function rawSummary(store: Store, item: StoredItem): Promise<RawSummary> {
  const kept = await store.itemRaw(item.id);
  const raw = kept?.raw;
  if (raw === undefined) {
    const reason = item.status === 'delivered' ? 'dropped_after_delivery' : 'never_stored';
    return { kept: false, reason, ...fromDocument(item.document) };
  }
  if (raw.byteLength > MAX_SUMMARY_RAW_BYTES) return { kept: true, bytes: raw.byteLength, ...fromDocument(item.document) };
  try {
    return { kept: true, bytes: raw.byteLength, ...fromRaw(raw, item.document) };
  } catch {
    // Bytes that never parsed (a dead letter): show what the document holds.
    return { kept: true, bytes: raw.byteLength, ...fromDocument(item.document) };
  }
}

function attemptView(a: ItemAttempt): AttemptView {
  return { at: a.at, outcome: a.outcome, code: a.error?.code ?? null, message: a.error?.message ?? null, delay_ms: a.delayMs ?? null };
}

export async function itemDetail(store: Store, routes: ReadonlyMap<string, RouteConfig>, id: number): Promise<ItemDetail | undefined> {
  const item = await store.getItem(id);
  if (item === undefined) return undefined;
  const [summary] = await store.listItems({ limit: 1, beforeId: id + 1 });
  if (summary === undefined || summary.id !== id) return undefined;
  const route = routes.get(item.route);
  const view = viewDocument(item.document);
  const comment = await commentView(store, item, view.doc, route);
  const [raw, attempts, thread] = await Promise.all([
    rawSummary(store, item),
    store.itemAttempts(id),
    threadView(store, item, route, comment),
  ]);
  const predictions =
    route?.mode === 'predict'
      ? (await store.listPredictions({ route: item.route, commentIds: [item.commentId], limit: 10 })).map((p) => ({
          id: p.id,
          created_at: p.createdAt,
          model: p.model,
          predictions: p.predictions,
        }))
      : null;
  return {
    item: itemRow(summary),
    key: item.key,
    origin: { ...item.origin },
    document: view.doc,
    document_cut: view.cut,
    comment,
    raw,
    warnings: item.warnings.map((w) => ({ code: w.code, message: w.message })),
    error: item.status === 'dead' || (item.status === 'queued' && item.attempts > 0) ? (item.lastError ?? null) : null,
    attempts: attempts.map(attemptView),
    predictions,
    thread,
  };
}
