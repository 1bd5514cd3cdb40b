import type { Warning } from '../errors.js';

/** One header field as it stands in the message. */
export interface HeaderField {
  /** Field name as written (case preserved). */
  name: string;
  /** Lowercased name, for lookups. */
  key: string;
  /** Unfolded value, RFC 2047 encoded-words NOT decoded, 8-bit bytes decoded as UTF-8 (latin1 where invalid). */
  value: string;
  /** The field's original lines, folded as in the message, without the final line break. */
  raw: string;
}

export interface AttachmentMeta {
  /** Decoded file name (RFC 2231 / RFC 2047), or a generated one such as `attachment-3.bin` when absent. */
  name: string;
  /** Size in decoded bytes. */
  size: number;
  /** Lowercased MIME type, e.g. `application/pdf`. */
  content_type: string;
  /** Content-Disposition inline and referenced by a Content-ID (JMAP: not part of the visible body). */
  inline: boolean;
}

/**
 * A message read from raw RFC 5322 bytes: everything the document and preview need,
 * nothing more (attachment content is never decoded into memory).
 */
export interface ParsedMessage {
  /** The original header block, line breaks normalised to LF, without the blank separator line. */
  headerBlock: string;
  headers: HeaderField[];
  /**
   * Decoded text of the text/plain parts of the body (RFC 8621 textBody), joined in order;
   * undefined when the body has no text/plain part.
   */
  text?: string;
  /** Decoded HTML of the text/html parts (RFC 8621 htmlBody); undefined when there is none. */
  html?: string;
  attachments: AttachmentMeta[];
  /**
   * False when the message's top-level entity is not the text sent as its body: a multipart,
   * or a single part that is an attachment (a PDF, a file sent alone). Its entity headers
   * (Content-Disposition, Content-ID, …) then describe something that is not sent. True for a
   * single text/plain or text/html message; undefined counts as true.
   */
  rootIsBody?: boolean;
  /** Bytes of the raw input. */
  size: number;
  warnings: Warning[];
}
