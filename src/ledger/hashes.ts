/**
 * The ledger's hashes. Two, because the service bills text, not bytes:
 * - `textHash`: the text of the comment the service builds from the document (its messages:
 *   body, subject, signature, participants, sent_at), as mailgate's preview builds it.
 * - `docHash`: the whole document (raw email and user properties, not the comment id).
 */
import { hash } from 'node:crypto';
import type { Message, RawEmailDocument } from '../model/index.js';
import { buildComment } from '../preview/comment.js';
import type { DocumentHashes } from './types.js';

/**
 * JSON with object keys sorted at every level, so that equal values hash equally. Keys sort by
 * UTF-16 code units (`Array.prototype.sort`'s own order); members whose value is undefined are
 * left out, array elements that are become null. Every message's ledger hashes are computed
 * over it in the parse worker, so it builds its text in one pass, without the intermediate
 * arrays of entries, filtered, sorted and mapped copies. The text must never change: stored
 * hashes are compared with it.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      out += (i === 0 ? '' : ',') + canonicalJson(v === undefined ? null : v);
    }
    return out + ']';
  }
  const object = value as Record<string, unknown>;
  let out = '';
  for (const key of Object.keys(object).sort()) {
    const v = object[key];
    if (v !== undefined) out += (out === '' ? '{' : ',') + JSON.stringify(key) + ':' + canonicalJson(v);
  }
  return out === '' ? '{}' : out + '}';
}

/**
 * SHA-256 hex of the text's UTF-8 bytes. The one-shot `hash` rather than a Hash object: the
 * parse worker hashes every message twice, and making the object (a stream) cost more than
 * hashing a few kilobytes.
 */
function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}

/** The document hash: raw email and user properties ({} when absent), key order irrelevant. */
export function docHashOf(doc: RawEmailDocument): string {
  return sha256(canonicalJson({ raw_email: doc.raw_email, user_properties: doc.user_properties ?? {} }));
}

/** A plain object holding exactly one member, a string (`{raw: …}`, `{plain: …}`, `{html: …}`). */
function oneString(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && typeof (value as Record<string, unknown>)[keys[0]!] === 'string';
}

function keysAre(value: object, keys: readonly string[]): boolean {
  const own = Object.keys(value);
  return own.length === keys.length && own.every((k, i) => k === keys[i]);
}

/**
 * `JSON.stringify(text)`, the last answer remembered: a comment's body is most often the
 * document's text itself (no quote or signature split off), and escaping a body costs more than
 * hashing it. documentJsonAndHash escapes the document's text first, textHashOf then finds it.
 */
let lastText: string | undefined;
let lastJson = '';

function jsonString(text: string): string {
  if (text !== lastText) {
    lastJson = JSON.stringify(text);
    lastText = text;
  }
  return lastJson;
}

/** A Message's members in canonicalJson's order (Array.prototype.sort of their names). */
const MESSAGE_KEYS = ['bcc', 'body', 'cc', 'from', 'language', 'sent_at', 'signature', 'subject', 'to'] as const;
const MESSAGE_KEY_SET: ReadonlySet<string> = new Set(MESSAGE_KEYS);

/**
 * canonicalJson of one message: its members written in their known order when it has no
 * others (else the general way), and a body of the one member `text` through jsonString.
 */
function messageJson(m: Message): string {
  if (m === null || typeof m !== 'object' || Object.getPrototypeOf(m) !== Object.prototype) return canonicalJson(m);
  for (const key of Object.keys(m)) if (!MESSAGE_KEY_SET.has(key)) return canonicalJson(m);
  let out = '';
  for (const key of MESSAGE_KEYS) {
    const v: unknown = m[key];
    if (v === undefined) continue;
    const text = key === 'body' && oneString(v) ? (v as { text?: unknown }).text : undefined;
    const json = typeof text === 'string' ? `{"text":${jsonString(text)}}` : canonicalJson(v);
    out += `${out === '' ? '{' : ','}"${key}":${json}`;
  }
  return out === '' ? '{}' : out + '}';
}

/** The text hash of a comment's messages: the SHA-256 of their canonicalJson. */
export function textHashOf(messages: readonly Message[]): string {
  let out = '[';
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    out += (i === 0 ? '' : ',') + (m === undefined ? 'null' : messageJson(m));
  }
  return sha256(out + ']');
}

/**
 * The document's JSON text (exactly `JSON.stringify(doc)`) and its `docHashOf`, together. The
 * header block and the body are most of a document's text, and both texts hold them escaped: for
 * a document as `buildDocument` makes it (raw_email with headers, body and attachments in that
 * order, the header block and the body each one string member) each is escaped once and its
 * text placed in both, as JSON and canonical JSON write a one-member object alike. Any other
 * shape is written twice, the plain way.
 */
export function documentJsonAndHash(doc: RawEmailDocument): { json: string; docHash: string } {
  const raw = doc.raw_email as RawEmailDocument['raw_email'] | undefined;
  const props = doc.user_properties;
  const shaped =
    raw !== undefined &&
    typeof doc.comment_id === 'string' &&
    keysAre(doc, props === undefined ? ['raw_email', 'comment_id'] : ['raw_email', 'comment_id', 'user_properties']) &&
    Object.getPrototypeOf(raw) === Object.prototype &&
    keysAre(raw, ['headers', 'body', 'attachments']) &&
    Array.isArray(raw.attachments) &&
    oneString(raw.headers) &&
    oneString(raw.body);
  if (!shaped) return { json: JSON.stringify(doc), docHash: docHashOf(doc) };
  const headers = JSON.stringify(raw.headers);
  const bodyKey = Object.keys(raw.body)[0]!;
  const body = `{${JSON.stringify(bodyKey)}:${jsonString((raw.body as Record<string, string>)[bodyKey]!)}}`;
  const json =
    `{"raw_email":{"headers":${headers},"body":${body},"attachments":${JSON.stringify(raw.attachments)}},` +
    `"comment_id":${JSON.stringify(doc.comment_id)}${props === undefined ? '' : `,"user_properties":${JSON.stringify(props)}`}}`;
  const canonical =
    `{"raw_email":{"attachments":${canonicalJson(raw.attachments)},"body":${body},"headers":${headers}},` +
    `"user_properties":${canonicalJson(props ?? {})}}`;
  return { json, docHash: sha256(canonical) };
}

/**
 * Both hashes of a document. Building the comment costs a preview: intake computes these in
 * the parse workers and stores them with the item, so delivery only calls this for documents
 * that arrive without them (library callers, property rules that changed a document).
 */
export function documentHashes(doc: RawEmailDocument): DocumentHashes {
  return { textHash: textHashOf(buildComment(doc).comment.messages), docHash: docHashOf(doc) };
}
