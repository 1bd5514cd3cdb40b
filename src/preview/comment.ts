/**
 * RawEmailDocument -> the comment the service would store (spec "Comment", "Email comments
 * generated from raw emails"). Built from the document alone, never from the raw MIME, so
 * the preview and the emulator store the same thing. Rules: docs/preview.md.
 */
import { commentIdFrom, messageIdOf } from '../document/comment-id.js';
import { warning, type Warning } from '../errors.js';
import { MAX_ADDRESS_CHARS, MAX_RECIPIENTS, MAX_TEXT_CHARS } from '../limits.js';
import {
  decodeWords,
  formatAddress,
  getHeader,
  getHeaders,
  parseAddressList,
  parseHeaderBlock,
  firstMessageId,
  type Address,
} from '../mime/headers.js';
import { htmlToText } from '../mime/html.js';
import type { HeaderField } from '../mime/types.js';
import type { Comment, Message, RawEmailDocument } from '../model/index.js';
import { generatedProperties, mergeUserPropertiesReport } from './properties.js';
import { splitReply } from './quotes.js';
import { threadIdFor } from './threads.js';
import { resolveDates } from './timestamp.js';
import type { BuildCommentOptions, HeaderFacts } from './types.js';

export interface BuildCommentResult {
  comment: Comment;
  warnings: Warning[];
  /** What the message's facts are read from, as building the comment read it (src/preview/facts.ts factsOf). */
  headerFacts: HeaderFacts;
}

/** The document's header fields, from `raw` or from the `parsed` map (list values joined with `,`, as the spec says). */
export function documentHeaders(document: RawEmailDocument): readonly HeaderField[] {
  const h = document.raw_email.headers;
  if ('raw' in h) return parseHeaderBlock(h.raw);
  return Object.entries(h.parsed).map(([name, v]) => {
    const value = Array.isArray(v) ? v.join(',') : v;
    return { name, key: name.toLowerCase(), value, raw: `${name}: ${value}` };
  });
}

/** The document's body as text: `plain` as it is, `html` converted to text. */
export function documentText(document: RawEmailDocument): string {
  const b = document.raw_email.body;
  const text = 'plain' in b ? b.plain : htmlToText(b.html);
  return text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text;
}

/** The document's comment id, or the one mailgate would send (the rule of src/document/comment-id.ts). */
export function commentIdOf(document: RawEmailDocument, headers: readonly HeaderField[]): string {
  if (document.comment_id !== undefined) return document.comment_id;
  const h = document.raw_email.headers;
  const b = document.raw_email.body;
  const head = 'raw' in h ? h.raw : headers.map((f) => f.raw).join('\n');
  return commentIdFrom(messageIdOf(headers), head, 'plain' in b ? b.plain : b.html).id;
}

function addressesOf(headers: readonly HeaderField[], name: string, warnings: Warning[]): Address[] {
  const out: Address[] = [];
  for (const v of getHeaders(headers, name)) out.push(...parseAddressList(v, warnings));
  return out;
}

/** The addresses of every From field, and the first one the first field names (the sender the facts show). */
function sendersOf(headers: readonly HeaderField[], warnings: Warning[]): { all: Address[]; first: Address | undefined } {
  const fields = getHeaders(headers, 'from');
  const all: Address[] = [];
  let first: Address | undefined;
  for (let i = 0; i < fields.length; i++) {
    const list = parseAddressList(fields[i]!, warnings);
    if (i === 0) first = list[0];
    all.push(...list);
  }
  return { all, first };
}

/** A participant as the comment shows it: `Name <address>`, the address alone when that would be too long. */
function shown(a: Address): string | undefined {
  const full = formatAddress(a).trim();
  if (full === '') return undefined;
  if (full.length <= MAX_ADDRESS_CHARS) return full;
  const bare = a.address?.trim() ?? '';
  return bare !== '' && bare.length <= MAX_ADDRESS_CHARS ? bare : full.slice(0, MAX_ADDRESS_CHARS);
}

function shownList(list: readonly Address[]): string[] | undefined {
  const out: string[] = [];
  for (const a of list) {
    const s = shown(a);
    if (s !== undefined && out.length < MAX_RECIPIENTS) out.push(s);
  }
  return out.length > 0 ? out : undefined;
}

function content(text: string | undefined): { text: string } | undefined {
  if (text === undefined) return undefined;
  const t = text.trim();
  return t === '' ? undefined : { text: t.length > MAX_TEXT_CHARS ? t.slice(0, MAX_TEXT_CHARS) : t };
}

/** The Message-ID without its angle brackets (the value as written when it holds no recognisable id). */
function messageIdProperty(value: string | undefined): string | undefined {
  return firstMessageId(value) ?? value?.replace(/[<>]/g, '').trim();
}

/** Sets `key` on `target` only when the value is defined (absent fields stay unset). */
function put<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

/**
 * The comment the service would store from `document`. `fields`, when given, are the document's
 * header fields as documentHeaders would split them (buildDocument hands them over), saving the split.
 */
export function buildComment(
  document: RawEmailDocument,
  options: BuildCommentOptions = {},
  fields?: readonly HeaderField[],
): BuildCommentResult {
  const warnings: Warning[] = [];
  const headers = fields ?? documentHeaders(document);
  const id = commentIdOf(document, headers);
  const dates = resolveDates(headers, options.receivedAt, warnings);
  const reply = splitReply(documentText(document));
  const senders = sendersOf(headers, warnings);
  const from = senders.all.find((a) => shown(a) !== undefined);
  const to = addressesOf(headers, 'to', warnings);
  const cc = addressesOf(headers, 'cc', warnings);
  const bcc = addressesOf(headers, 'bcc', warnings);

  const message: Message = { body: { text: reply.body } };
  const subject = decodeWords(getHeader(headers, 'subject') ?? '', warnings);
  put(message, 'subject', content(subject));
  put(message, 'signature', content(reply.signature));
  put(message, 'from', from === undefined ? undefined : shown(from));
  put(message, 'to', shownList(to));
  put(message, 'cc', shownList(cc));
  put(message, 'bcc', shownList(bcc));
  put(message, 'sent_at', dates.sentAt);

  const threadId = threadIdFor(headers, id);
  const messageId = messageIdProperty(getHeader(headers, 'message-id'));
  const generated = generatedProperties({
    from,
    to,
    cc,
    bcc,
    messageId,
    threadId,
    hasSignature: message.signature !== undefined,
    position: options.threadContext?.thread_position ?? 0,
  });
  // Without client properties the generated ones are the comment's as they are (nothing to merge).
  const merged =
    document.user_properties === undefined
      ? { properties: generated, dropped: [], overridden: [] }
      : mergeUserPropertiesReport(generated, document.user_properties, { override: options.override ?? [] });
  for (const k of merged.dropped) {
    warnings.push(
      warning(
        'MAILGATE_WARN_PROPERTY_DROPPED',
        `user property "${k}" conflicts with a generated property and is not in override_user_properties`,
      ),
    );
  }
  for (const k of merged.overridden) {
    warnings.push(warning('MAILGATE_WARN_PROPERTY_OVERRIDDEN', `user property "${k}" overrides the generated value`));
  }

  const comment: Comment = { id, timestamp: dates.timestamp, messages: [message], user_properties: merged.properties, thread_id: threadId };
  const attachments = document.raw_email.attachments;
  if (attachments !== undefined && attachments.length > 0) comment.attachments = attachments.map((a) => ({ ...a }));
  return { comment, warnings, headerFacts: { from: senders.first, subject, messageId, date: dates.date } };
}

/**
 * The comment with `number:Position in Thread` set to a thread position computed across a set
 * of comments (see computeThreadProperties), unless the client overrides that property.
 */
export function withThreadPosition(comment: Comment, threadPosition: number, override: readonly string[] = []): Comment {
  if (override.includes('Position in Thread')) return comment;
  return { ...comment, user_properties: { ...comment.user_properties, 'number:Position in Thread': threadPosition } };
}
