/**
 * The explicit comment id: lowercase hex of the UTF-8 bytes of the Message-ID value as
 * written (the first Message-ID field, unfolded, surrounding whitespace trimmed, angle
 * brackets and anything else kept). When there is no Message-ID (or it is blank), or its hex
 * would exceed 1024 characters (a value over 512 bytes): SHA-256 hex of
 * `headerBlock + "\n\n" + body`, where body is the decoded text/plain body, else the
 * decoded HTML, else empty.
 */
import { createHash } from 'node:crypto';
import { MAX_COMMENT_ID_CHARS } from '../limits.js';
import { getHeader } from '../mime/headers.js';
import type { HeaderField, ParsedMessage } from '../mime/types.js';

export interface CommentIdResult {
  id: string;
  source: 'message-id' | 'hash-missing' | 'hash-too-long';
}

export function messageIdValue(parsed: ParsedMessage): string | undefined {
  return messageIdOf(parsed.headers);
}

/** The first Message-ID value, trimmed; undefined when absent or blank. */
export function messageIdOf(headers: readonly HeaderField[]): string | undefined {
  const v = getHeader(headers, 'message-id')?.trim();
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The rule itself, on its inputs: the Message-ID value (see messageIdOf), the header block
 * and the body text that the hash covers.
 */
export function commentIdFrom(messageId: string | undefined, headerBlock: string, body: string): CommentIdResult {
  if (messageId === undefined) return { id: contentHash(headerBlock, body), source: 'hash-missing' };
  const bytes = Buffer.from(messageId, 'utf8');
  if (bytes.length * 2 > MAX_COMMENT_ID_CHARS) return { id: contentHash(headerBlock, body), source: 'hash-too-long' };
  return { id: bytes.toString('hex'), source: 'message-id' };
}

function contentHash(headerBlock: string, body: string): string {
  const h = createHash('sha256');
  h.update(headerBlock, 'utf8');
  h.update('\n\n', 'utf8');
  h.update(body, 'utf8');
  return h.digest('hex');
}

export function resolveCommentId(parsed: ParsedMessage): CommentIdResult {
  return commentIdFrom(messageIdValue(parsed), parsed.headerBlock, parsed.text ?? parsed.html ?? '');
}

/** The comment id mailgate sends for this message (see the module comment for the rule). */
export function commentIdFor(parsed: ParsedMessage): string {
  return resolveCommentId(parsed).id;
}
