/**
 * The Adapter contract (DESIGN.md "Contracts"). Adapters import these types and nothing
 * else from the core pipeline; they never import each other.
 */

import type { Readable } from 'node:stream';
import type { ErrorCode } from '../errors.js';
import type { OperationDoc } from './operation-doc.js';
import type { Logger } from '../logger.js';
import type { MboxQuoting } from '../mime/mbox-finish.js';
import type { Checkpoint, Origin } from '../model/origin.js';
import type { CheckpointStore, Fence } from '../store/types.js';

// The store keeps these shapes too; they live with the model so that the store never imports the pipeline.
export type { Checkpoint, Envelope, Origin } from '../model/origin.js';
export type { MboxQuoting } from '../mime/mbox-finish.js';

export interface Inbound {
  raw: Buffer;
  /**
   * The message's identity, built by its adapter and stable across reads: re-reading the same
   * message (a re-run import, an IMAP re-fetch) yields the same key, so it is stored once. Pull
   * kinds build it from where the message sits (IMAP `imap:<account>:<folder>:<uidvalidity>:<uid>`,
   * files `files:<path>:<index>`); push kinds from its bytes (`contentKey`, `sha256:<hex>`).
   * The core stores it within the route's target and never reads it.
   */
  key: string;
  /**
   * A second identity the sender gave the message (a provider's event id, an upload's
   * idempotency key: `eventAlias`), stored within the route's target beside `key`: a retry
   * that carries the same id with other bytes is a duplicate too. Absent where there is none.
   */
  alias?: string;
  origin: Origin;
  /** Name of the route (configuration) this message belongs to. */
  route: string;
  receivedAt: Date;
  /** The adapter has an action to apply once the API accepted the message (see OutboxInput.afterDelivery). */
  afterDelivery?: boolean;
  /**
   * The adapter could not read a message (a corrupt Outlook file, one over the size budget):
   * intake stores it as a dead letter with this reason and whatever bytes `raw` holds, so
   * nothing read is lost or silent.
   */
  failure?: { code: string; message: string };
}

/** How the door answers when a route's outbox is full (`delivery.max_outbox`). */
export type WhenFull = 'wait' | 'refuse';

export interface AcceptOptions {
  /** Written in the same transaction as the messages, and only once every `wait` call accepted before it is durable. */
  checkpoint?: Checkpoint;
  /**
   * Set by the runtime for an adapter that runs under a mailbox lease (adapters never pass it):
   * the messages and checkpoint are written only while the lease is held with that token.
   */
  fence?: Fence;
  /**
   * `wait` (default; pull kinds): waits while a route's outbox is full, and stores calls in call
   * order (a call queued behind one that failed fails too, its checkpoint never written).
   * `refuse` (push kinds): rejects at once with MAILGATE_ERR_INTAKE_OUTBOX_FULL, nothing stored;
   * the sender retries.
   */
  whenFull?: WhenFull;
  /** The sender went away before its messages were taken into a commit: they are not stored, the call rejects. */
  signal?: AbortSignal;
}

/** What became of one accepted message, once durable. */
export interface Accepted {
  /** The outbox item id (stable: a duplicate answers the id of the first item). */
  id: string;
  /** Already stored for this route (same key, or same id at the sender): nothing was stored. */
  duplicate: boolean;
  /** Stored as a dead letter (unreadable or unparseable; raw bytes kept) rather than queued. */
  dead?: { code: string; message: string };
  /**
   * A duplicate by its id at the sender whose bytes differ from the first item's (a provider
   * re-encoding a retry, an upload reusing an Idempotency-Key for other content): nothing stored.
   */
  conflict?: boolean;
}

/**
 * The one intake door, for pull and push kinds alike. `accept` resolves once every message is
 * durable (concurrent calls share one commit: group commit), with one answer per message in
 * order; it rejects with nothing of the call stored: MAILGATE_ERR_INTAKE_UNAVAILABLE (store
 * failing; `refuse` calls), MAILGATE_ERR_INTAKE_OUTBOX_FULL (`whenFull: 'refuse'`), the store's
 * error (`wait` calls; MAILGATE_ERR_STORE_FENCED when the lease was lost). An adapter
 * acknowledges nothing before it resolved.
 */
export interface Intake {
  accept(inputs: Inbound[], options?: AcceptOptions): Promise<Accepted[]>;
  /** Reads a checkpoint written earlier with accept(). */
  checkpoint(key: string): Promise<Checkpoint['value'] | undefined>;
  /** The state of an item by id (upload status); undefined for an id that names none. */
  item(id: string): Promise<PushItemState | undefined>;
  /**
   * A pull adapter's filter (src/controls/) left a message out: it was never handed to intake,
   * and the checkpoint moved past it. Called once per message, after the batch beside it is
   * durable; the runtime counts it (metrics, status, console). Absent where nothing counts.
   */
  filtered?(report: FilteredReport): void;
}

/** One message a mailbox's filter left out. */
export interface FilteredReport {
  route: string;
  adapter: string;
  /** The adapter instance (IMAP account, `<entry>/<user>` of Graph). */
  instance: string;
  folder: string;
  reason: 'participants' | 'auto_reply' | 'mailing_list' | 'since' | 'excluded_label';
}

/**
 * `pull`: the adapter reads a source it owns (IMAP, files) and resumes from checkpoints.
 * `push`: messages are handed to it (webhooks, uploads, SMTP); its answer to the sender is the
 * acknowledgement, given only once `Intake.accept` resolved.
 */
export type AdapterMode = 'pull' | 'push';

/** One health line of an adapter: an IMAP account, a webhook endpoint, a files drop. */
export interface AdapterHealth {
  /** Instance label (account or endpoint name). */
  name: string;
  /** Counted by readiness: false makes `/readyz` fail for this adapter. */
  ok: boolean;
  /** Short state word, e.g. `idle`, `syncing`, `backoff`, `listening`. */
  state: string;
  /** More to show on the authenticated status endpoints (never secrets). */
  detail?: Record<string, unknown>;
  lastError?: { code: string; message: string };
  /** A mailbox's folders and how far each is synced (status, the console's Mailboxes view, the store). */
  folders?: FolderSync[];
}

/** How far one folder (label) of a mailbox is synced, the same for every kind. */
export interface FolderSync {
  folder: string;
  /** `in_progress` while a pass reads it (or before its first complete pass), then `up_to_date`. */
  state: 'in_progress' | 'up_to_date';
  /** ISO-8601: mail received before this was read (the start of the last complete pass). */
  syncedUntil?: string;
  /** ISO-8601: the end of the last complete pass. */
  lastSynced?: string;
  /** Messages left to read in the pass under way, where the protocol tells. */
  behind?: number;
}

export interface AfterDeliveryResult {
  applied: Origin[];
  skipped: Origin[];
  /** Origins that could not be handled now (mailbox unreachable): they stay due and are retried. */
  deferred?: Origin[];
}

/** An HTTP request to a push adapter, as received: the exact body bytes, before any parsing. */
export interface PushRequest {
  method: string;
  /** Path and query string as received, e.g. `/webhooks/mailgun-in?x=1`. */
  url: string;
  /** Lower-case header names. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
  /**
   * The body unread, for an endpoint that declares `streamBody` (`body` is then empty): it ends
   * with an error carrying the endpoint's `tooLarge` code (status 413) once more than
   * `bodyLimit` bytes came.
   */
  stream?: Readable;
  remoteAddress?: string;
}

export interface PushResponse {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON unless it is a string or Buffer. */
  body?: unknown;
}

export interface PushItemState {
  id: string;
  route: string;
  state: 'queued' | 'retrying' | 'delivered' | 'dead';
  commentId?: string;
  attempts?: number;
  /** For retrying items: when the next delivery attempt is due (ISO-8601). */
  nextAttemptAt?: string;
  /** For dead items: the code and the API's reason. */
  error?: { code: string; message: string };
}

/** An HTTP endpoint of a push adapter, mounted by the server (framework-neutral). */
export interface PushEndpoint {
  method: 'GET' | 'HEAD' | 'POST';
  /** e.g. `/webhooks/mailgun-in`; may end in `/:id`. */
  path: string;
  /** Largest body accepted in bytes; over it the server answers 413 without reading further. */
  bodyLimit: number;
  /** The code of the 413 answer over `bodyLimit`, in the endpoint's terms. Default MAILGATE_ERR_SERVER_BODY_TOO_LARGE. */
  tooLarge?: ErrorCode;
  /**
   * Hand the body over unread as `PushRequest.stream` (an upload of an archive spooled to disk)
   * rather than buffered. A declared length over `bodyLimit` is still answered 413 before it is read.
   */
  streamBody?: boolean;
  /** Answers a request; the adapter hands its messages to the intake its `start` got (`intakeSlot`). */
  handle(req: PushRequest, params: Record<string, string>): Promise<PushResponse>;
  /**
   * Checks a credential the request carries in its headers (an API key, basic auth, a bearer
   * key) before the body is read: a response refuses the request at once (the body is never
   * buffered); undefined lets it in. Endpoints whose proof is in the body (a signature over it)
   * leave it out and verify in `handle`.
   */
  authorize?(req: Omit<PushRequest, 'body'>): PushResponse | undefined;
  /**
   * Served on the public listener (`server.public_listen`) as well: what outsiders must reach
   * (provider webhooks, uploads, change-notification receivers). Default false: the private
   * listener only.
   */
  public?: boolean;
  /** The endpoint in the server's OpenAPI document (GET /api/openapi.json). */
  openapi?: OperationDoc;
}

export interface Adapter {
  readonly kind: string;
  /** The instance name from the configuration (an IMAP adapter built from one account: the account's name). */
  readonly name: string;
  readonly mode: AdapterMode;
  /**
   * Runs until the input is exhausted (files) or the signal aborts (services), handing messages
   * to `intake`. Push adapters keep it until the signal aborts (their endpoints refuse with a
   * retryable answer before and after).
   */
  start(intake: Intake, signal: AbortSignal): Promise<void>;
  /** Health lines for readiness and status; none means healthy while running. */
  health?(): AdapterHealth[];
  /** Actions to apply once the API accepted messages of this adapter (IMAP seen/flag/move). Never rejects. */
  afterDelivery?(origins: Origin[]): Promise<AfterDeliveryResult>;
  /**
   * Registers the runtime's call for "deferred actions can be applied again" (a mailbox that was
   * unreachable connected again): its due actions are retried at once rather than after the
   * after-delivery queue's backoff, which may have grown to a minute during the outage.
   */
  onActionsReady?(listener: () => void): void;
  /** Push adapters: the HTTP endpoints the server mounts for them. */
  endpoints?(): PushEndpoint[];
  /**
   * A mailbox (pull adapter) with controls (src/controls/): whether its configuration enables
   * it, and how long it may fail before it is disabled. The runtime keeps its state in the store.
   */
  readonly controls?: { enabled: boolean; disableAfterMs: number };
}

/** What a factory gets from the core besides its configuration entry. */
export interface AdapterContext {
  /** The service's logger; the adapter makes its own child (`adapter`, `instance`/`account`). */
  logger: Logger;
  /** Size budget of one raw message (`parsing.max_message_bytes`): larger ones become failures. */
  maxMessageBytes: number;
  /** The store's checkpoints, for the cross-replica wake-ups of notified kinds (src/pipeline/wake-board.ts); absent without a store. */
  checkpoints?: Pick<CheckpointStore, 'getCheckpoint' | 'setCheckpoint'>;
}

/** One message (or unreadable item) of a path input, before parsing. */
export interface PathItem {
  origin: Origin;
  /** The file the item was read from and its index in it (from 0), as the command line shows them. */
  path: string;
  index: number;
  /** Undefined for an item that could not be read. */
  raw?: Buffer;
  /** Arrival time as the container tells it (mbox `From ` line, maildir name, mtime); undefined when unknown. */
  receivedAt?: Date;
  error?: { code: string; message: string };
  /** Where the item after this one starts in the same file (`offset` in bytes): how far the read got. */
  next?: { index: number; offset: number };
}

export interface PathReadOptions {
  maxMessageBytes?: number;
  mboxQuoting?: MboxQuoting;
  /** A file met in a folder walk that is not mail (skipped, not an error). */
  onSkip?: (path: string, reason: string) => void;
}

export interface PathAdapterOptions {
  paths: string[];
  route: string;
  /** What the checkpoints are scoped to (the import passes route and target). */
  scope?: string;
  /** Messages per intake transaction. */
  batchSize?: number;
  maxMessageBytes: number;
  mboxQuoting?: MboxQuoting;
  /** An item that could not be read (kept as a dead letter). */
  onError?: (where: Pick<PathItem, 'path' | 'index'>, error: { code: string; message: string }) => void;
  /** A file met in a folder walk that is skipped (not mail, a link refused), with the reason. */
  onSkip?: (path: string, reason: string) => void;
}

/** Files and folders named on the command line: `mailgate import` (an adapter) and `preview`/`--dry-run` (items). */
export interface PathInputs {
  adapter(options: PathAdapterOptions): Adapter;
  read(paths: string[], options: PathReadOptions): AsyncIterable<PathItem>;
  /** Every file a read of `paths` visits, in order, with its size in bytes (what a progress bar measures against). */
  files(paths: string[]): AsyncIterable<{ path: string; size: number }>;
}
