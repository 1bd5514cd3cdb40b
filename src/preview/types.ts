import type { Warning } from '../errors.js';
import type { Comment, RawEmailDocument, ThreadProperties } from '../model/index.js';
import type { DocumentOptions } from '../document/types.js';
import type { Address } from '../mime/address.js';

/** How the comment is built from a document (what the service would store). */
export interface BuildCommentOptions {
  /** Property names (without type prefix) whose client values override the generated ones (sync-raw-emails `override_user_properties`). */
  override?: string[];
  /** The message's thread, when known: `number:Position in Thread` is its thread_position (0 without it). */
  threadContext?: Pick<ThreadProperties, 'thread_position'>;
  /** Timestamp fallback when the message has neither a usable Date nor a Received date (default: now). */
  receivedAt?: Date;
}

export interface PreviewOptions extends DocumentOptions, BuildCommentOptions {
  /** Size budget for one raw message in bytes (default DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
}

/** What `preview()` returns: the document exactly as it would be sent, and the comment the service would store. */
export interface PreviewResult {
  document: RawEmailDocument;
  comment: Comment;
  warnings: Warning[];
}

/** What the facts are read from: the first From field's first address, the decoded Subject, the Message-ID, the Date. */
export interface HeaderFacts {
  from: Address | undefined;
  subject: string;
  /** The Message-ID without angle brackets (the value as written when it holds no recognisable id). */
  messageId: string | undefined;
  /** The Date field as parsed, before any clamping. */
  date: Date | undefined;
}
