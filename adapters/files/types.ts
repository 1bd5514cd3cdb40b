/** Shapes shared by the file readers: items, options and resume points. */
import type { GatewayError } from '../../src/errors.js';
import type { Origin } from '../../src/pipeline/types.js';
import type { PstBudget } from '../../src/mime/pst-thread.js';

/** How `>From ` lines in an mbox body are unquoted (see docs/cli.md "mbox rules"). */
import type { MboxQuoting } from '../../src/mime/mbox-finish.js';
export type { MboxQuoting };

/** Where the next item of one file starts: the message index in the file and its byte offset. */
export interface FilePosition {
  index: number;
  offset: number;
}

/** A resume point: the file (inside an input) and the position of the next item to read in it. */
export interface ResumePoint {
  path: string;
  index: number;
  offset?: number;
}

/** The files kind's details of an origin: the file, the message's index in it, and what a container states about it. */
export type FileDetails = {
  path: string;
  /** Index of the message inside its file (mbox), from 0. */
  index: number;
  /** The folder of an Outlook file or a Google Vault export the message sat in. */
  folder?: string;
  /** Labels a Google Vault export gave the message, in their order. */
  labels?: string[];
  /** The account a Google Vault export names for the message. */
  account?: string;
};

export interface FileOrigin extends Origin {
  adapter: 'files';
  details: FileDetails;
}

interface FileItemBase {
  origin: FileOrigin;
  /** Byte offset of the item in its file (mbox: the start of its `From ` line). */
  offset: number;
  /** Position of the item after this one in the same file: the checkpoint once this item is done. */
  next: FilePosition;
  /**
   * When the message arrived, as its container tells: the date of the mbox `From ` line, the
   * leading seconds of a maildir file name, else the file's modification time. Undefined when
   * unknown. A preview uses it as the timestamp of a message with neither Date nor Received.
   */
  receivedAt?: Date;
}

export interface FileMessage extends FileItemBase {
  raw: Buffer;
  error?: undefined;
}

/** An item that could not be read (oversized, unreadable, not a message): reported, never thrown. */
export interface FileFailure extends FileItemBase {
  /** The file's bytes when they were read (a corrupt Outlook file), kept with the dead letter. */
  bytes?: Buffer;
  raw?: undefined;
  error: GatewayError;
}

export type FileItem = FileMessage | FileFailure;

export interface ReadOptions {
  /** Size budget of one message in bytes (default DEFAULT_MAX_MESSAGE_BYTES); larger ones become MAILGATE_ERR_MIME_TOO_LARGE items. */
  maxMessageBytes?: number;
  /** mbox body unquoting (default `mboxrd`). */
  mboxQuoting?: MboxQuoting;
  /** Continue from here: files before `path` are skipped, `path` itself starts at `index`/`offset`. */
  resumeFrom?: ResumePoint;
  /**
   * In a directory walk, read links to files outside the walked folder too (default false: such
   * links are skipped and reported through onSkip). A file named as an input is always read.
   */
  followSymlinks?: boolean;
  /** Called for a file met in a directory walk that is skipped (not mail, a link refused), with the reason; not an error. */
  onSkip?: (path: string, reason: string) => void;
  /** Read chunk size for streamed files (default 64 KiB). */
  chunkBytes?: number;
  /** Budgets of the worker that reads PST/OST files (pst-thread.ts; defaults there). */
  pstBudget?: PstBudget;
}

export const DEFAULT_CHUNK_BYTES = 64 * 1024;
