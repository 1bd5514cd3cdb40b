/**
 * The ledger's hashes. Two, because the service bills text, not bytes:
 * - `textHash`: the text of the comment the service builds from the document (its messages:
 *   body, subject, signature, participants, sent_at), as mailgate's preview builds it.
 * - `docHash`: the whole document (raw email and user properties, not the comment id).
 */
import { createHash } from 'node:crypto';
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

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The text hash of a comment's messages. */
export function textHashOf(messages: readonly Message[]): string {
  return sha256(canonicalJson(messages));
}

/** The document hash: raw email and user properties ({} when absent), key order irrelevant. */
export function docHashOf(doc: RawEmailDocument): string {
  return sha256(canonicalJson({ raw_email: doc.raw_email, user_properties: doc.user_properties ?? {} }));
}

/**
 * Both hashes of a document. Building the comment costs a preview: intake computes these in
 * the parse workers and stores them with the item, so delivery only calls this for documents
 * that arrive without them (library callers, property rules that changed a document).
 */
export function documentHashes(doc: RawEmailDocument): DocumentHashes {
  return { textHash: textHashOf(buildComment(doc).comment.messages), docHash: docHashOf(doc) };
}
