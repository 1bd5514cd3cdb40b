import type { Warning } from '../errors.js';
import type { HeaderField } from '../mime/types.js';
import type { RawEmailDocument, UserProperties } from '../model/index.js';

export interface DocumentOptions {
  /**
   * Which body to send. `auto` (default): text/plain when the message has one, else the HTML.
   * `plain`: always plain text, derived from the HTML when there is no text/plain part.
   * `html`: the HTML when there is one, else the plain text.
   */
  body?: 'auto' | 'plain' | 'html';
  /** `raw` (default): the original header block less MIME structure headers. `parsed`: a map, used only when no key repeats and every key is ASCII. */
  headers?: 'raw' | 'parsed';
  /** Client user properties to attach (already resolved from the route). */
  userProperties?: UserProperties;
  /** Explicit comment id; by default derived from the Message-ID (see commentIdFor). */
  commentId?: string;
}

export interface DocumentResult {
  document: RawEmailDocument;
  warnings: Warning[];
  /** The header fields behind `headers.raw`, exactly as splitting it would give them (absent when it cannot be vouched for). */
  fields?: readonly HeaderField[];
}
