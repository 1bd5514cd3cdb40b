/**
 * One item for the console (`GET /api/items/:id`): the comment as the service builds it from the
 * stored document (with the body cut into text, quote and signature spans), the raw message
 * summarized from the kept bytes (headers, MIME tree, attachment list — never attachment bytes),
 * the delivery attempts, predictions and the thread across everything ingested.
 */
import type { RouteConfig } from '../config/schema.js';
import { MAX_TEXT_CHARS } from '../limits.js';
import type { Comment, RawEmailDocument } from '../model/index.js';
import { routeTarget } from '../pipeline/origin.js';
import { threadInIndex } from '../pipeline/thread-index.js';
import { buildComment, computeThreadProperties, documentText, isGeneratedName, splitReply } from '../preview/index.js';
import { itemRow, originDisplay } from '../server/console-rows.js';
import type { AttemptView, BodySpan, CommentView, DocumentCut, ItemDetail, RawSummary } from '../server/console-types.js';
import type { ItemAttempt, ItemState, Store, StoredItem } from '../store/types.js';
import { rawSummary } from './console-raw.js';
import { threadView } from './console-thread.js';

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

/** The comment as built from the (cut) document, with its body text and spans; null for a message that never parsed. */
function builtComment(item: StoredItem, doc: RawEmailDocument, route: RouteConfig | undefined): Derived['built'] {
  if (!isParsed(doc)) return null;
  const comment: Comment = item.preview ?? buildComment(doc, { override: route?.override_user_properties ?? [] }).comment;
  const text = documentText(doc);
  const split = splitReply(text);
  return { comment, text, spans: bodySpans(text, split.body, split.signature) };
}

/** The built comment placed in its thread as the store knows it now (read on every view: the thread grows). */
async function commentView(store: Store, built: Derived['built'], route: RouteConfig | undefined): Promise<CommentView | null> {
  if (built === null) return null;
  const placed =
    route === undefined
      ? { comment: built.comment, thread: computeThreadProperties([built.comment]).get(built.comment.id) ?? null }
      : await threadInIndex(store, routeTarget(route), built.comment);
  return {
    comment: placed.comment,
    body_text: built.text,
    spans: built.spans,
    generated_properties: Object.keys(placed.comment.user_properties)
      .map((k) => k.replace(/^(string|number):/, ''))
      .filter(isGeneratedName),
    thread_properties: placed.thread,
  };
}

function attemptView(a: ItemAttempt): AttemptView {
  return { at: a.at, outcome: a.outcome, code: a.error?.code ?? null, message: a.error?.message ?? null, delay_ms: a.delayMs ?? null };
}

/**
 * What a view derives from the stored document and the kept bytes — the document cut for the
 * view, the comment built from it, the raw summary — kept for the last MAX_DERIVED views per
 * store, under the item's state: opening the same large item again (a refresh, a live update,
 * several tabs) reads neither its document nor its bytes again. A change of state (delivered,
 * dead, replayed, retried) is another entry.
 */
interface Derived {
  key: string;
  origin: Record<string, unknown>;
  originLines: ItemDetail['origin_lines'];
  warnings: ItemDetail['warnings'];
  doc: RawEmailDocument;
  cut: DocumentCut | null;
  built: { comment: Comment; text: string; spans: BodySpan[] } | null;
  raw: RawSummary;
}

export const MAX_DERIVED = 16;
const derivedByStore = new WeakMap<Store, Map<string, Derived>>();

async function derivedOf(store: Store, state: ItemState, route: RouteConfig | undefined): Promise<Derived | undefined> {
  let cache = derivedByStore.get(store);
  if (cache === undefined) derivedByStore.set(store, (cache = new Map()));
  const stamp = JSON.stringify([state.id, state.status, state.attempts, state.finishedAt ?? null, route?.name ?? null]);
  const known = cache.get(stamp);
  if (known !== undefined) return known;
  const item = await store.getItem(state.id);
  if (item === undefined) return undefined;
  const view = viewDocument(item.document);
  const derived: Derived = {
    key: item.key,
    origin: { ...item.origin },
    originLines: originDisplay(item.origin).lines,
    warnings: item.warnings.map((w) => ({ code: w.code, message: w.message })),
    doc: view.doc,
    cut: view.cut,
    built: builtComment(item, view.doc, route),
    raw: await rawSummary(store, item),
  };
  cache.set(stamp, derived);
  while (cache.size > MAX_DERIVED) cache.delete(cache.keys().next().value!);
  return derived;
}

export async function itemDetail(store: Store, routes: ReadonlyMap<string, RouteConfig>, id: number): Promise<ItemDetail | undefined> {
  const state = await store.itemState(id);
  if (state === undefined) return undefined;
  const [summary] = await store.listItems({ limit: 1, beforeId: id + 1 });
  if (summary === undefined || summary.id !== id) return undefined;
  const route = routes.get(state.route);
  const derived = await derivedOf(store, state, route);
  if (derived === undefined) return undefined;
  const comment = await commentView(store, derived.built, route);
  // This item in its thread: what it says is read from the comment built for the view (the cut document).
  const self = {
    route: state.route,
    commentId: state.commentId,
    document: derived.doc,
    ...(derived.built && { preview: derived.built.comment }),
  };
  const [attempts, thread] = await Promise.all([store.itemAttempts(id), threadView(store, self, route, comment)]);
  const predictions =
    route?.mode === 'predict'
      ? (await store.listPredictions({ route: state.route, commentIds: [state.commentId], limit: 10 })).map((p) => ({
          id: p.id,
          created_at: p.createdAt,
          model: p.model,
          predictions: p.predictions,
        }))
      : null;
  return {
    item: itemRow(summary),
    key: derived.key,
    origin: { ...derived.origin },
    origin_lines: derived.originLines,
    document: derived.doc,
    document_cut: derived.cut,
    comment,
    raw: derived.raw,
    warnings: derived.warnings,
    error: state.status === 'dead' || (state.status === 'queued' && state.attempts > 0) ? (state.error ?? null) : null,
    attempts: attempts.map(attemptView),
    predictions,
    thread,
  };
}
