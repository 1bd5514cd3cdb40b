/**
 * The JSON shapes of the console endpoints (docs/server.md "The console API"): what the
 * console page reads. Field names are snake_case like the rest of `/api/*`; times are
 * ISO-8601 strings; `null` means known to be absent, never "not loaded".
 */

/**
 * One item's state, as the console shows it: `queued` (waiting for its first attempt),
 * `retrying` (queued after at least one failed attempt), `delivered`, `unchanged` (skipped by
 * the ledger: nothing sent, nothing billed), `dead` (a dead letter). The five are disjoint.
 */
export type ConsoleItemState = 'queued' | 'retrying' | 'delivered' | 'unchanged' | 'dead';

export const CONSOLE_ITEM_STATES: readonly ConsoleItemState[] = ['queued', 'retrying', 'delivered', 'unchanged', 'dead'];

/** A coded failure: a MAILGATE_ERR_* code or the API's error code. */
export interface ConsoleError {
  code: string;
  message: string;
}

/** Where an item came from, for a list row. */
export interface OriginSummary {
  /** Adapter kind: `imap`, `files`, `upload`, `webhook:<provider>`, `smtp`. */
  kind: string;
  /** Adapter instance / account name, when the adapter has one. */
  name: string | null;
  /** The message's id within its instance as its adapter names it (`INBOX:7:42`, a provider's event id, `/mail/a.mbox:3`). */
  id: string;
  /** Push intake: the provider (`sendgrid`, `smtp`, `upload`, …). */
  provider?: string;
  /** One line for a table cell, e.g. `imap support-inbox INBOX uid 42`, `files /mail/a.mbox #3`, `mailgun in event 1a2b`. */
  label: string;
  /**
   * What the adapter states about the message, under its own names: IMAP `folder`, `uidValidity`,
   * `uid`; files `path`, `index`, `folder`, `labels`; Graph and Gmail `mailbox`, `folder`/`labels`;
   * webhooks `eventId`.
   */
  details: Record<string, unknown>;
}

/** `GET /api/items`: one row. */
export interface ItemRow {
  id: number;
  state: ConsoleItemState;
  route: string;
  comment_id: string;
  origin: OriginSummary;
  /** The sender's address and display name as the message's From states them; null when unknown. */
  sender: string | null;
  sender_name: string | null;
  subject: string | null;
  /** The Message-ID without angle brackets; null when the message has none. */
  message_id: string | null;
  /** The message's timestamp (Date header, else received date); null when unknown. */
  timestamp: string | null;
  /** When the item was stored (its place in the list). */
  received_at: string;
  /** Delivered and dead items: when. */
  finished_at: string | null;
  /** 1 when the item was delivered and billed, 0 when it cost nothing (unchanged), null when not known (yet). */
  ai_units: number | null;
  /** Retries scheduled so far. */
  attempts: number;
  /** Queued and retrying items: when the next attempt is due. */
  next_attempt_at: string | null;
  /** The last error's code (retrying: last retry's reason; dead: why), else null. */
  last_error_code: string | null;
}

/** `GET /api/items?state=&route=&adapter=&since=&until=&q=&before=&limit=` */
export interface ItemsQuery {
  state?: ConsoleItemState;
  route?: string;
  /** Origin adapter kind: `imap`, `files`, `upload`, `webhook:mailgun`, `smtp`. */
  adapter?: string;
  /** Adapter instance / account name (needs `adapter`), e.g. `support-inbox`. */
  adapter_name?: string;
  /** Received at or after / before this instant (ISO-8601). */
  since?: string;
  until?: string;
  /** Search: a prefix of the sender's address or display name, the subject, the Message-ID or the comment id (case-insensitive). */
  q?: string;
  /** Cursor: the `next` of the previous page. */
  before?: string;
  /** 1..500, default 50. */
  limit?: number;
}

export interface ItemsPage {
  /** Newest first. */
  items: ItemRow[];
  /** Pass as `before` for the next (older) page; null when this was the last page. */
  next: string | null;
}

/** A span of the decoded body text: [start, end) in UTF-16 code units. */
export interface BodySpan {
  kind: 'text' | 'quote' | 'signature';
  start: number;
  end: number;
}

/** The comment as the service will build it, with what the page needs to mark it up. */
export interface CommentView {
  /** The comment (id, timestamp, messages, user_properties, thread_id, attachments). */
  comment: unknown;
  /** The whole decoded body the document carries, which `spans` cut into text, quote and signature. */
  body_text: string;
  spans: BodySpan[];
  /** Names of the user properties the service generates (the rest are the route's client properties). */
  generated_properties: string[];
  /** Thread properties across everything ingested for the route's target; null when unknown. */
  thread_properties: unknown;
}

/** One MIME part of the raw message; attachment bytes are never included. */
export interface MimePartView {
  /** e.g. `multipart/mixed`, `text/plain`. */
  content_type: string;
  /** Part path like IMAP's: `1`, `1.2`; `` for the top part. */
  part: string;
  charset?: string;
  transfer_encoding?: string;
  disposition?: string;
  filename?: string;
  /** Decoded size in bytes, when known. */
  size?: number;
  children?: MimePartView[];
}

export interface AttachmentView {
  name: string | null;
  content_type: string;
  size: number;
}

/** The raw message as received, summarized (never the attachment bytes). */
export interface RawSummary {
  /** Whether the original bytes are still kept (they are dropped once the item is delivered). */
  kept: boolean;
  /** Why not, when not kept: `dropped_after_delivery` or `never_stored`. */
  reason?: 'dropped_after_delivery' | 'never_stored';
  /** Size of the kept bytes. */
  bytes?: number;
  /** Header fields in order, values unfolded (from the raw bytes, else from the stored document). */
  headers: Array<{ name: string; value: string }>;
  /** The MIME part tree; null when the raw bytes are gone (the document keeps no structure). */
  parts: MimePartView | null;
  /** From the raw bytes, else from the stored document's attachment list. */
  attachments: AttachmentView[];
}

/** One delivery attempt of an item. */
export interface AttemptView {
  at: string;
  /** `delivered` / `unchanged` (accepted or skipped), `retry` (a retry was scheduled), `dead` (dead-lettered). */
  outcome: 'delivered' | 'unchanged' | 'retry' | 'dead';
  /** The error code (API error code or MAILGATE_ERR_*) of a failed attempt. */
  code: string | null;
  /** The API's answer or the error text. */
  message: string | null;
  /** Retries: the delay before the next attempt, in ms. */
  delay_ms: number | null;
}

export interface PredictionView {
  id: number;
  created_at: string;
  model: { version: number; time: string } | null;
  /** Labels with probabilities, as the API answered them. */
  predictions: unknown[];
}

/** A member of the item's thread across everything ingested for the route's target. */
export interface ThreadMemberView {
  comment_id: string;
  timestamp: string;
  from: string | null;
  /** The stored item of that comment on the same route, when there is one. */
  item_id: number | null;
  /** This item. */
  self: boolean;
  /** Subject of the stored message, for the members nearest this item (null: not stored here, or not read). */
  subject: string | null;
  /** The start of what it says (its comment's body: quoted history and signature removed); null as for `subject`. */
  text: string | null;
}

/** A field of the document cut for the view: its length stored and shown, in UTF-16 code units. */
export interface DocumentCut {
  field: 'raw_email.body.html';
  chars: number;
  shown_chars: number;
}

/** `GET /api/items/:id` */
export interface ItemDetail {
  item: ItemRow;
  /** The idempotency key (adapter-specific). */
  key: string;
  /** The full origin as stored: `adapter`, `instance`, `id`, a pushed message's `envelope`, the adapter's `details`. */
  origin: Record<string, unknown>;
  /** The origin's details as its kind shows them (`Folder: INBOX`, `UID: 42`), in order. */
  origin_lines: Array<{ label: string; value: string }>;
  /** The exact JSON document sent (or to be sent), with an HTML body over 131072 characters cut (`document_cut`). */
  document: unknown;
  /** What `document` leaves out of the stored one; null when it is whole. */
  document_cut: DocumentCut | null;
  /** Null for a message that never parsed. */
  comment: CommentView | null;
  raw: RawSummary;
  warnings: ConsoleError[];
  /** Dead or retrying: the last error in full. */
  error: ConsoleError | null;
  /** Oldest first. */
  attempts: AttemptView[];
  /** Predict routes: the stored predictions of this comment; null on sync routes. */
  predictions: PredictionView[] | null;
  /** Oldest first; empty when the thread is unknown. */
  thread: ThreadMemberView[];
}

/** `GET /api/events`: the `data` of each server-sent event, by event name. */
export interface ItemEvent {
  /** A new item, or one whose state changed (written by this process). */
  id: number;
  state: ConsoleItemState;
}

export interface StatusEvent {
  at: string;
  /** Queued items (leased or not) per route. */
  outbox_depth: Record<string, number>;
}

export interface ConsoleEvents {
  item: ItemEvent;
  status: StatusEvent;
}

/** `GET /api/overview`: one route × adapter line. */
export interface OverviewLine {
  route: string;
  adapter: string;
  counts: Record<ConsoleItemState, number>;
}

export interface RouteOverview {
  route: string;
  /** `sync` or `predict`, and its source or dataset; null for a route no longer configured. */
  mode: string | null;
  target: string | null;
  counts: Record<ConsoleItemState, number>;
  /** Queued items (leased or not). */
  outbox_depth: number;
  /** Items delivered or unchanged in the last minute / hour (from the attempts history). */
  delivered_last_minute: number;
  delivered_last_hour: number;
  /** Dead-lettered in the last hour. */
  dead_last_hour: number;
  /** AI units per UTC day, the last 14 days, oldest first (days without units: 0). */
  ai_units_per_day: Array<{ day: string; units: number }>;
}

export interface AdapterHealthLine {
  kind: string;
  name: string;
  /** e.g. `idle`, `syncing`, `backoff`, `running`. */
  state: string | null;
  healthy: boolean | null;
  last_error: { code: string; message: string; at?: string } | null;
  /** Everything else the adapter reports (folders, counters), passed through. */
  detail: Record<string, unknown>;
}

export interface OwnerView {
  id: string;
  host: string;
  pid: number;
  started_at: string;
  heartbeat_at: string;
  heartbeat_age_ms: number;
}

/** The store's size and oldest items (docs/store.md "Retention"), and whether writes fail for want of space. */
export interface StoreView {
  kind: string;
  bytes: number;
  /** SQLite: free pages inside the file, in bytes; null on PostgreSQL. */
  free_bytes: number | null;
  /** SQLite's auto-vacuum mode (`none`: the file never shrinks until `mailgate store compact`); null on PostgreSQL. */
  auto_vacuum: string | null;
  oldest: { queued: string | null; delivered: string | null; dead: string | null };
  /** Set while store writes fail for want of space (MAILGATE_ERR_STORE_FULL). */
  full: { since: string; method: string; message: string } | null;
}

export interface Overview {
  at: string;
  /** When the item counts were taken: they are reused for up to 10 s (counting reads every item). */
  counts_at: string;
  routes: RouteOverview[];
  /** Counts per route and adapter kind. */
  lines: OverviewLine[];
  adapters: AdapterHealthLine[];
  owners: OwnerView[];
  store: StoreView;
}

/** `POST /api/dlq/replay` body `{ids: number[]}` (1..1000): per id, in order. */
export interface BulkReplayResult {
  results: Array<{ id: number; status: 'queued' | 'dead' } | { id: number; error: ConsoleError }>;
}

/** `GET /api/dlq`: one dead letter, as the store lists it. */
export interface DeadLetterRow {
  id: number;
  route: string;
  key: string;
  commentId: string;
  origin: Record<string, unknown>;
  /** Where the message came from as its kind shows it: the same label as the item's row (`origin.label`). */
  originLabel: string;
  error: ConsoleError;
  attempts: number;
  enqueuedAt: string;
  deadAt: string;
  warnings: ConsoleError[];
  hasRaw: boolean;
}

export interface DeadLetterPage {
  items: DeadLetterRow[];
  next_after: number | null;
}

/** One folder of a mailbox as `/api/mailboxes` shows it: its sync state and what its filter left out. */
export interface FolderView {
  folder: string;
  state: 'in_progress' | 'up_to_date' | null;
  syncedUntil: string | null;
  lastSynced: string | null;
  behind: number | null;
  filtered: number;
}

/** One mailbox as /api/status, /api/mailboxes and the console show it (built by src/service/mailboxes.ts). */
export interface MailboxView {
  mailbox: string;
  kind: string;
  /** False for a mailbox the store remembers and the configuration no longer names. */
  configured: boolean;
  state: 'enabled' | 'disabled';
  reason: 'user' | 'quota' | 'sync_error' | null;
  byCommand: boolean;
  errorKind: string | null;
  errorCode: string | null;
  message: string | null;
  failingSince: string | null;
  /** The adapter's run state on this replica (`running`, `standby`, `disabled`…), null when not configured here. */
  run: string | null;
  filtered: number;
  folders: FolderView[];
}
