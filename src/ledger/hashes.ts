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

/** JSON with object keys sorted at every level, so that equal values hash equally. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
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
