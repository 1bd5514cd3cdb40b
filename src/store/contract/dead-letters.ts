/** Dead letters: listed, shown with their raw bytes, replayed in place, purged. */
import type { Warning } from '../../errors.js';
import type { Comment, RawEmailDocument } from '../../model/index.js';
import type { Origin } from '../../model/origin.js';
import type { ItemError, OutboxInput } from './outbox.js';

export interface DeadLetter {
  id: number;
  route: string;
  key: string;
  commentId: string;
  origin: Origin;
  error: ItemError;
  attempts: number;
  enqueuedAt: string;
  deadAt: string;
  warnings: Warning[];
  /** Whether the raw bytes were kept (only `getDeadLetter` returns them). */
  hasRaw: boolean;
}

export interface DeadLetterDetail extends DeadLetter {
  document: RawEmailDocument;
  preview?: Comment;
  raw?: Buffer;
}

export interface DeadLetterQuery {
  route?: string;
  /** At most this many (1..10000). */
  limit: number;
  /** Cursor: only ids greater than this. */
  after?: number;
}

/** Which dead letters to purge; at least one field must be set. Set fields combine with AND. */
export interface PurgeFilter {
  ids?: number[];
  route?: string;
  /** Dead-lettered before this instant. */
  olderThan?: Date;
  /** Every dead letter (alone: an explicit request to purge everything). */
  all?: true;
}

export interface ReplayResult {
  id: number;
  /** `queued` when the replacement parsed; `dead` again when it carries an error. */
  status: 'queued' | 'dead';
}

export interface DeadLetterStore {
  listDeadLetters(query: DeadLetterQuery): Promise<DeadLetter[]>;
  getDeadLetter(id: number): Promise<DeadLetterDetail | undefined>;
  /**
   * Replaces a dead letter with a re-parsed version of itself (same route and key) and
   * queues it again, or keeps it dead with the new error. MAILGATE_ERR_STORE_NOT_FOUND when
   * `id` is not a dead letter; MAILGATE_ERR_STORE_REPLAY_MISMATCH when route or key differ.
   */
  replayDeadLetter(id: number, replacement: OutboxInput): Promise<ReplayResult>;
  /** Deletes dead letters; returns how many. */
  purgeDeadLetters(filter: PurgeFilter): Promise<number>;
}
