/**
 * The Store contract (DESIGN.md "State"): outbox, checkpoints, leases, ledger, thread index,
 * dead letters, predictions and billing counters. Two implementations (sqlite/, postgres/)
 * pass one conformance suite (test/contract/store.case.ts).
 *
 * Every method is async so that both an embedded and a networked database fit. Times are
 * the store's own clock (SQLite: this process; PostgreSQL: the server), returned as ISO-8601;
 * leases and due times follow the `now` the store was opened with, when it was given one.
 */
import type { DocumentHashes, Ledger, LedgerEntry, LedgerRecord } from '../ledger/index.js';
import type { Warning } from '../errors.js';
import type { Comment, PredictedLabel, RawEmailDocument } from '../model/index.js';
import type { Checkpoint, Origin } from '../model/origin.js';

/** The ledger the batcher reads and writes; every Store is one (src/ledger/). */
export type { Ledger, LedgerEntry, LedgerRecord };

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
   * read by `enqueueKeyed` only: an input whose key or any alias its route holds is a duplicate.
   */
  aliases?: string[];
}

/** Where one input of `enqueueKeyed` is stored. */
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
  /** Inputs whose (route, key) was already stored: nothing changed for them. */
  duplicates: number;
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

export interface ThreadEntry {
  commentId: string;
  threadId: string;
  /** ISO-8601. */
  timestamp: string;
  from?: string;
  participants: string[];
}

export interface PredictionInput {
  commentId: string;
  key: string;
  predictions: PredictedLabel[];
  model: { version: number; time: string } | null;
}

export interface StoredPrediction extends PredictionInput {
  id: number;
  route: string;
  createdAt: string;
}

export interface PredictionQuery {
  route?: string;
  commentIds?: string[];
  limit: number;
  after?: number;
}

export interface Lease {
  name: string;
  owner: string;
  expiresAt: string;
  /**
   * Fencing token: grows each time the lease is granted to an owner that did not hold it live.
   * Writes made under the lease carry it (`Fence`), and the store refuses an older one.
   */
  token: number;
}

/**
 * What a write made under a mailbox lease carries: the store checks, in the write's own
 * transaction, that `owner` still holds `lease` live with this `token`, and otherwise refuses
 * the whole write with MAILGATE_ERR_STORE_FENCED. A process that lost its lease without knowing
 * it (paused past its expiry, cut off from the database) can therefore never write over the
 * replica that holds it now.
 */
export interface Fence {
  lease: string;
  owner: string;
  token: number;
}

/** A process that claims work, as it registers itself (`registerOwner`). */
export interface OwnerRegistration {
  /** The owner string of its claims and leases, unique per process run. */
  id: string;
  /** `os.hostname()` of its machine: its pid means something only there. */
  host: string;
  pid: number;
  /**
   * When the process started, as the operating system tells it (Linux: field 22 of
   * `/proc/<pid>/stat`), to tell a reused pid from the owner's; absent where unknown.
   */
  procStart?: string;
  /** How often it renews its heartbeat, in ms: it counts as dead after missing a few. */
  heartbeatMs: number;
  /**
   * Set by processes that take mailbox leases (`mailgate serve`): a digest of the lease names
   * they can serve. Mailboxes are spread over the live owners of the same group.
   */
  group?: string;
}

/** A registered owner (`listOwners`). */
export interface OwnerInfo extends OwnerRegistration {
  startedAt: string;
  heartbeatAt: string;
  /** How long ago its last heartbeat was, by the store's clock, in ms. */
  heartbeatAgeMs: number;
}

/** What `reapOwners` took back. */
export interface ReapResult {
  /** The owners removed. */
  owners: string[];
  /** Queued items their claims held, now claimable at once. */
  claims: number;
}

export interface OutboxCount {
  route: string;
  status: OutboxStatus;
  count: number;
}

/** Cumulative per-route counters for `mailgate status`; never decrease. */
export interface RouteCounters {
  route: string;
  enqueued: number;
  delivered: number;
  unchanged: number;
  /** Items dead-lettered for any reason: rejected by the API, unparseable, retries exhausted. */
  deadLettered: number;
  aiUnits: number;
}

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

export interface Store extends Ledger {
  /** `sqlite` or `postgres`. */
  readonly kind: string;

  // --- outbox ---------------------------------------------------------------------
  /**
   * Stores the items (idempotent on route+key) and the checkpoint in one transaction; with a
   * `fence`, only while its lease is held with that token (else MAILGATE_ERR_STORE_FENCED, nothing written).
   */
  enqueue(items: OutboxInput[], checkpoint?: Checkpoint, fence?: Fence): Promise<EnqueueResult>;
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
  /**
   * Push intake: stores the items in one transaction (all or none) and answers, per input in
   * order, the item it is stored as. Idempotent on (route, key) and on (route, alias): an input
   * whose key or any alias its route holds already (stored before, by a concurrent writer, or
   * earlier in the batch) is a duplicate of that item, writes nothing but its aliases for that
   * item, and is not indexed nor counted. Aliases live as long as their item (pruning or purging
   * it forgets them, as it forgets its key).
   */
  enqueueKeyed(items: OutboxInput[]): Promise<KeyedOutcome[]>;
  /** Which of these keys or aliases the route holds (any status, until pruned), each with its item id. */
  findKeys(route: string, keys: string[]): Promise<Map<string, number>>;
  /** The delivery state of one item by id (queued, delivered until pruned, dead until purged). */
  itemState(id: number): Promise<ItemState | undefined>;

  // --- after-delivery actions ------------------------------------------------------
  /** Delivered (or unchanged) items enqueued with `afterDelivery` whose action is not finished, by id, after `afterId`. */
  pendingActions(limit: number, afterId?: number): Promise<PendingAction[]>;
  /** Marks the actions of these items finished (applied, or nothing left to apply); returns how many changed. */
  finishActions(ids: number[]): Promise<number>;

  // --- checkpoints ------------------------------------------------------------------
  getCheckpoint(key: string): Promise<Checkpoint['value'] | undefined>;
  /** For adapters that advance without messages; otherwise pass the checkpoint to enqueue. Fenced as `enqueue`. */
  setCheckpoint(key: string, value: Checkpoint['value'], fence?: Fence): Promise<void>;
  listCheckpoints(): Promise<Array<Checkpoint & { updatedAt: string }>>;

  // --- leases (mailbox ownership) --------------------------------------------------
  /**
   * Takes the lease when free, expired, or already held by `owner` (then extends it, same token);
   * answers the lease granted, or undefined when another owner holds it.
   */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<Lease | undefined>;
  /** Extends a lease `owner` still holds live; throws MAILGATE_ERR_STORE_LEASE_LOST when it expired or another owner took it. */
  renewLease(name: string, owner: string, ttlMs: number): Promise<void>;
  /** Extends every lease `owner` holds live, in one statement, and answers them (a lease missing from the answer is lost). */
  renewLeases(owner: string, ttlMs: number): Promise<Lease[]>;
  /** Gives the lease up if `owner` holds it (its token is kept: the next grant gets a greater one). */
  releaseLease(name: string, owner: string): Promise<boolean>;
  /** The lease while someone holds it live. */
  getLease(name: string): Promise<Lease | undefined>;
  /** Every lease held live, by name. */
  listLeases(): Promise<Lease[]>;

  // --- owners (processes that claim work) ----------------------------------------------
  /** Registers (or registers again) a process; its heartbeat counts from now. */
  registerOwner(owner: OwnerRegistration): Promise<void>;
  /** Renews the heartbeat; false when the owner is not registered (it was reaped: register again). */
  heartbeatOwner(id: string): Promise<boolean>;
  /** Removes the owner and releases the claims it still holds (clean shutdown); returns how many claims. */
  deregisterOwner(id: string): Promise<number>;
  /** Registered owners, oldest first. */
  listOwners(): Promise<OwnerInfo[]>;
  /**
   * Removes the owners named in `dead` (a caller on their host saw their process gone) and every
   * owner whose last heartbeat is older than `missedBeats` of its own heartbeat intervals, in one
   * transaction with their claims: the queued items they held become claimable at once, and
   * their mailbox leases are released.
   */
  reapOwners(dead: string[], missedBeats: number): Promise<ReapResult>;

  // --- thread index -------------------------------------------------------------------
  indexThread(source: string, entries: ThreadEntry[]): Promise<void>;
  /** Members of each thread, oldest first (then by comment id). */
  threadMembers(source: string, threadIds: string[]): Promise<Map<string, ThreadEntry[]>>;

  // --- dead letters -------------------------------------------------------------------
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

  // --- predictions ----------------------------------------------------------------------
  /** Stores the latest predictions per (route, comment id). */
  savePredictions(route: string, items: PredictionInput[]): Promise<void>;
  listPredictions(query: PredictionQuery): Promise<StoredPrediction[]>;

  // --- billing counters -------------------------------------------------------------------
  addAiUnits(route: string, n: number): Promise<void>;
  counters(route?: string): Promise<RouteCounters[]>;

  // --- console (src/store/items.ts) ---------------------------------------------------------
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

  // --- lifecycle ------------------------------------------------------------------------
  /** Applies pending migrations (run by openStore; safe to call again). Returns the schema version. */
  migrate(): Promise<number>;
  close(): Promise<void>;
}
