/**
 * The outbox: items stored by intake (with the adapter's checkpoint, under its fence), claimed
 * by delivery, settled as delivered, retried or dead-lettered; push intake's keyed writes; the
 * after-delivery actions that become due with delivery.
 */
import type { Warning } from '../../errors.js';
import type { DocumentHashes, LedgerRecord } from '../../ledger/index.js';
import type { Comment, RawEmailDocument } from '../../model/index.js';
import type { Checkpoint, Origin } from '../../model/origin.js';
import type { MessageFacts } from '../../preview/facts.js';
import type { Fence } from './ownership.js';
import type { ThreadEntry } from './threads.js';

/** A coded failure stored with an item: `code` is a MAILGATE_ERR_* code or an API error code. */
export interface ItemError {
  code: string;
  message: string;
}

/** One message to deliver, as intake hands it to the store. */
export interface OutboxInput {
  /** Route (configuration) name. */
  route: string;
  /**
   * Idempotency key, unique per route, supplied by the adapter: `imap:acct:INBOX:<uidvalidity>:<uid>`,
   * `files:<path>:<index>`, `webhook:<provider>:<event id>`. Enqueuing a key again is a no-op.
   */
  key: string;
  commentId: string;
  document: RawEmailDocument;
  preview?: Comment;
  origin: Origin;
  /**
   * `document` and `preview` as JSON text, when the caller has it already (the parse workers
   * produce it): the store writes this text instead of serializing the objects again.
   */
  json?: { document: string; preview?: string };
  /** The document's ledger hashes, when the caller has them (the parse workers compute them). */
  hashes?: DocumentHashes;
  /**
   * The message's facts the console lists and searches by, when the caller has them (the parse
   * workers compute them): without them the store takes them from `document` before its write
   * transaction.
   */
  facts?: MessageFacts;
  /** The original bytes: kept until the item is delivered, and for dead letters (replay). */
  raw?: Buffer;
  warnings?: Warning[];
  /** A parse failure: the item goes straight to the dead letters, raw bytes kept. */
  error?: ItemError;
  /**
   * An after-delivery action (IMAP `seen`, `flag:`, `move:`) is due once the API accepted
   * the item: from then on `pendingActions` lists it until `finishActions`. Being a column of
   * the item, it becomes due in the same transaction that marks the item delivered.
   */
  afterDelivery?: boolean;
  /**
   * A thread index entry for this item, written in the enqueue transaction (also when the
   * item itself is a duplicate), as `indexThread(thread.source, [thread.entry])` would.
   */
  thread?: { source: string; entry: ThreadEntry };
  /**
   * More idempotency keys of the item within its route (a pushed message's provider event id),
   * read by `enqueue`: an input whose key or any alias its route holds is a duplicate.
   */
  aliases?: string[];
}

/** Where one input of `enqueue` is stored. */
export interface KeyedOutcome {
  /** The item: a new one, or the one that already held the input's key or one of its aliases. */
  id: number;
  /** The input matched an item stored before (or earlier in the same batch): nothing was written for it. */
  duplicate: boolean;
  /** That item's key: another than the input's when it matched by an alias. */
  key: string;
  status: OutboxStatus;
}

/** The delivery state of one item, without its document (`itemState`). */
export interface ItemState {
  id: number;
  route: string;
  key: string;
  commentId: string;
  status: OutboxStatus;
  /** Retries scheduled so far. */
  attempts: number;
  enqueuedAt: string;
  /** Queued items: when the next delivery attempt is due (ISO-8601). */
  nextAttemptAt?: string;
  /** Delivered and dead items: when (ISO-8601). */
  finishedAt?: string;
  outcome?: DeliveryInfo['outcome'];
  /** Dead items: why; queued items: the reason of the last scheduled retry. */
  error?: ItemError;
}

export interface EnqueueResult {
  /** New items queued for delivery. */
  queued: number;
  /** New items stored as dead letters (inputs with `error`). */
  deadLettered: number;
  /** Inputs whose (route, key) or alias was already stored: nothing changed for them. */
  duplicates: number;
  /** Per input, in order: the item it is stored as (new, or the one that held its key or alias). */
  items: KeyedOutcome[];
}

export type OutboxStatus = 'queued' | 'delivered' | 'dead';

/** What a claim returns: everything delivery needs, without the raw bytes. */
export interface OutboxItem {
  id: number;
  route: string;
  key: string;
  commentId: string;
  /** The document, parsed from `documentJson` when first read. */
  document: RawEmailDocument;
  /** The document as stored (JSON text): delivery sends it without parsing it. */
  documentJson: string;
  /** The ledger hashes stored with the document (absent for items stored before they were). */
  hashes?: DocumentHashes;
  preview?: Comment;
  origin: Origin;
  warnings: Warning[];
  /** Retries scheduled so far (0 on the first delivery attempt). */
  attempts: number;
  enqueuedAt: string;
  /** The reason of the last scheduled retry, if any. */
  lastError?: ItemError;
}

/** Any stored item by id, whatever its status (`getItem`). */
export interface StoredItem extends OutboxItem {
  status: OutboxStatus;
  /** For delivered items: `unchanged` when the ledger kept it from being sent. */
  outcome?: DeliveryInfo['outcome'];
  /** When it was delivered or dead-lettered (ISO-8601). */
  finishedAt?: string;
}

export interface DeliveryInfo {
  /** `unchanged`: skipped because the ledger showed the same text and properties (nothing billed). */
  outcome: 'delivered' | 'unchanged';
  /**
   * AI units the batch cost, added to the route's counter in the same transaction (also when
   * no id changed: the units were spent), as `addAiUnits` would.
   */
  aiUnits?: { route: string; units: number };
  /** Ledger entries written in the same transaction, as `record` would (also when no id changed). */
  ledger?: LedgerRecord[];
}

/** An accepted item whose after-delivery action has not been applied yet. */
export interface PendingAction {
  id: number;
  route: string;
  origin: Origin;
}

export interface OutboxCount {
  route: string;
  status: OutboxStatus;
  count: number;
}

/** Intake writes, delivery claims and settles. */
export interface OutboxStore {
  /** Which of these keys the route already holds (any status, until pruned): intake skips parsing them. */
  knownKeys(route: string, keys: string[]): Promise<Set<string>>;
  /** Ready items (queued, due, not leased or lease expired), oldest first, leased to `owner` for `leaseMs`. */
  claim(route: string | undefined, limit: number, owner: string, leaseMs: number): Promise<OutboxItem[]>;
  /**
   * Marks queued items delivered (or unchanged) and drops their raw bytes, with the optional
   * AI units and ledger entries of `info`, in one transaction. Returns how many items changed.
   */
  markDelivered(ids: number[], info: DeliveryInfo): Promise<number>;
  /**
   * Extends the lease of claimed items `owner` still holds (a long delivery keeps them);
   * returns how many it extended. Items another owner took after the lease ran out are not touched.
   */
  renewClaims(ids: number[], owner: string, leaseMs: number): Promise<number>;
  /** Releases the lease, counts an attempt and makes the items due again after `delayMs`. */
  scheduleRetry(ids: number | number[], delayMs: number, reason: ItemError): Promise<number>;
  /** Moves a queued item to the dead letters with the reason; the raw bytes are kept. */
  deadLetter(id: number, error: ItemError): Promise<boolean>;
  /**
   * Deletes delivered items finished before `olderThan` (retention), except those whose
   * after-delivery action is still due. Their keys may then be enqueued again; the ledger
   * still keeps an unchanged document from being sent twice.
   */
  pruneDelivered(olderThan: Date): Promise<number>;
  /** Queued items (leased or not) for one route or all. */
  outboxDepth(route?: string): Promise<number>;
  outboxCounts(): Promise<OutboxCount[]>;
  /** One item by id, queued, delivered (until pruned) or dead, without its raw bytes. */
  getItem(id: number): Promise<StoredItem | undefined>;
  /** Delivered (or unchanged) items enqueued with `afterDelivery` whose action is not finished, by id, after `afterId`. */
  pendingActions(limit: number, afterId?: number): Promise<PendingAction[]>;
  /** Marks the actions of these items finished (applied, or nothing left to apply); returns how many changed. */
  finishActions(ids: number[]): Promise<number>;
}

/** A message's outbox key and, when its sender named it, the alias of that id. */
export interface MessageKeys {
  key: string;
  alias?: string;
}

/** Intake's writes (pull and push alike), idempotent on keys and aliases; an item's narrow state. */
export interface KeyedStore {
  /**
   * The one enqueue: stores the items, the checkpoint and the items' thread index entries (also
   * for duplicates) in one transaction, all or none, and answers per input in order the item it
   * is stored as. Idempotent on (route, key) and on (route, alias): an input whose key or any
   * alias its route holds already (stored before, by a concurrent writer, or earlier in the
   * batch) is a duplicate of that item, writes nothing but its aliases for that item, and is
   * not counted. Aliases live as long as their item (pruning or purging it forgets them, as it
   * forgets its key). With a `fence`, only while its lease is held with that token (else
   * MAILGATE_ERR_STORE_FENCED, nothing written).
   */
  enqueue(items: OutboxInput[], checkpoint?: Checkpoint, fence?: Fence): Promise<EnqueueResult>;
  /** Which of these keys or aliases the route holds (any status, until pruned), each with its item id. */
  findKeys(route: string, keys: string[]): Promise<Map<string, number>>;
  /**
   * What a pulled call asks before its messages are parsed, in one store call: `found`, as
   * `findKeys` over every message's key and alias; and a first parse attempt counted, as
   * `ControlStore.beginParseAttempts` counts it, for each message of which the route holds
   * neither key nor alias. `begun` answers the keys counted now; a key neither held nor begun
   * was counted before (its earlier parse never finished).
   */
  findKeysAndBegin(route: string, messages: readonly MessageKeys[]): Promise<{ found: Map<string, number>; begun: Set<string> }>;
  /** The delivery state of one item by id (queued, delivered until pruned, dead until purged). */
  itemState(id: number): Promise<ItemState | undefined>;
}
