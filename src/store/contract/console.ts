/**
 * The console's read model: items listed and searched by the fields stored at enqueue, their
 * attempts and raw bytes, and the counts the overview shows.
 */
import type { Origin } from '../../model/origin.js';
import type { ItemError, OutboxStatus } from './outbox.js';

/** An item's state in the console: `retrying` is queued after a failed attempt; the five are disjoint. */
export type ItemListState = 'queued' | 'retrying' | 'delivered' | 'unchanged' | 'dead';

/** `listItems`: newest first; set fields combine with AND. */
export interface ItemQuery {
  state?: ItemListState;
  route?: string;
  /** Origin adapter kind (`imap`, `webhook:mailgun`). */
  adapter?: string;
  /** Adapter instance / account name (with `adapter`). */
  account?: string;
  /** Stored at or after / before. */
  since?: Date;
  until?: Date;
  /**
   * Case-insensitive prefix of the sender's address or display name, the subject, the
   * Message-ID (without angle brackets) or the comment id. 1..256 characters.
   */
  q?: string;
  /** Cursor: only ids lower than this. */
  beforeId?: number;
  /** 1..10000. */
  limit: number;
}

/** One item as the console lists it (`listItems`): the outbox row and the fields stored for search. */
export interface ItemSummary {
  id: number;
  route: string;
  key: string;
  commentId: string;
  state: ItemListState;
  origin: Origin;
  attempts: number;
  enqueuedAt: string;
  nextAttemptAt?: string;
  finishedAt?: string;
  lastError?: ItemError;
  /** From the message's headers at enqueue; absent for items stored before they were kept. */
  sender?: string;
  senderName?: string;
  subject?: string;
  messageId?: string;
  /** The message's timestamp (ISO-8601), when its headers give one. */
  timestamp?: string;
}

/** One delivery attempt of an item (`itemAttempts`), written with the outcome it led to. */
export interface ItemAttempt {
  at: string;
  outcome: 'delivered' | 'unchanged' | 'retry' | 'dead';
  error?: ItemError;
  /** Retries: the delay until the next attempt. */
  delayMs?: number;
}

/** Items per route, origin adapter kind and console state (`itemCounts`). */
export interface ItemCount {
  route: string;
  adapter: string;
  state: ItemListState;
  count: number;
}

/** Attempts per route and outcome since an instant (`attemptCounts`). */
export interface AttemptCount {
  route: string;
  outcome: ItemAttempt['outcome'];
  count: number;
}

/** AI units of one route on one UTC day (`aiUnitsByDay`). */
export interface DailyAiUnits {
  route: string;
  /** `YYYY-MM-DD`. */
  day: string;
  units: number;
}

/** The raw bytes of an item (`itemRaw`): `raw` absent when they were not kept or were dropped after delivery. */
export interface ItemRaw {
  status: OutboxStatus;
  raw?: Buffer;
}

export interface ConsoleStore {
  /** Items newest first (by id), filtered; the searchable fields are stored at enqueue. */
  listItems(query: ItemQuery): Promise<ItemSummary[]>;
  /** The delivery attempts of one item, oldest first (written by markDelivered, scheduleRetry, deadLetter). */
  itemAttempts(id: number): Promise<ItemAttempt[]>;
  /** The kept raw bytes of any item; undefined when there is no such item. */
  itemRaw(id: number): Promise<ItemRaw | undefined>;
  /** Items stored for these comment ids on a route, by comment id (the newest item when several). */
  itemsByComment(route: string, commentIds: string[]): Promise<Map<string, number>>;
  /** Item counts per route, adapter kind and state. */
  itemCounts(): Promise<ItemCount[]>;
  /** Attempts per route and outcome at or after `since`. */
  attemptCounts(since: Date): Promise<AttemptCount[]>;
  /** AI units per route and UTC day, for days at or after `since` (a `YYYY-MM-DD` day). */
  aiUnitsByDay(since: string): Promise<DailyAiUnits[]>;
}
