import type { Warning } from '../errors.js';
import type { Comment, RawEmailDocument } from '../model/index.js';
import type { DocumentOptions } from '../document/types.js';

export interface PreviewOptions extends DocumentOptions {
  /** Size budget for one raw message in bytes (default DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
}

/** What `preview()` returns: the document exactly as it would be sent, and the comment the service would store. */
export interface PreviewResult {
  document: RawEmailDocument;
  comment: Comment;
  warnings: Warning[];
}
