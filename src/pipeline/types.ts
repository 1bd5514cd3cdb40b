/**
 * The Adapter contract (DESIGN.md "Contracts"). Adapters import these types and nothing
 * else from the core pipeline; they never import each other.
 */

/** Where a message came from. Stored with the outbox item and shown in previews. */
export interface Origin {
  /** Adapter kind: `files`, `imap`, `upload`, `webhook:<provider>`, `smtp`. */
  adapter: string;
  /** Adapter instance / account name from the configuration, when there is one. */
  account?: string;
  folder?: string;
  uidValidity?: number;
  uid?: number;
  path?: string;
  /** Index of the message inside its file (mbox), from 0. */
  index?: number;
  /** Provider event id, SMTP queue id, upload id… */
  eventId?: string;
  /**
   * Push intake (webhooks, uploads, SMTP): the envelope as the sender gave it, kept beside the
   * message (never written into its bytes). A route maps it into user properties with
   * placeholders such as `{envelope.to}`.
   */
  envelope?: Envelope;
}

/** Envelope and transport facts of a pushed message. Every field is optional: providers differ. */
export interface Envelope {
  /** MAIL FROM / the provider's envelope sender. */
  from?: string;
  /** RCPT TO / the provider's envelope recipients. */
  to?: string[];
  /** The provider (`sendgrid`, `mailgun`, …) or `smtp`, `upload`. */
  provider?: string;
  /** Client address the message came from, as the provider reports it. */
  remoteAddress?: string;
  helo?: string;
  tls?: boolean;
  spamVerdict?: string;
  spamScore?: number;
  spf?: string;
  dkim?: string;
  dmarc?: string;
  /** Anything else the provider states about the message, flat strings only. */
  extra?: Record<string, string>;
}

export interface Inbound {
  raw: Buffer;
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

/** An adapter's resume point, written in the same transaction as the items it covers. */
export interface Checkpoint {
  /** e.g. `imap:support-inbox:INBOX`, `files:/path/to/archive.mbox`. */
  key: string;
  /** Opaque to the store; adapters define the shape (UIDVALIDITY/last UID/HIGHESTMODSEQ, byte offset…). */
  value: Record<string, unknown>;
}

export interface IntakeSink {
  /**
   * Resolves once every message of the batch (and the checkpoint) is durable. An adapter may
   * call it again before the previous call resolved: batches are stored in call order, and a
   * batch queued behind one that failed fails too (its checkpoint is never written).
   */
  accept(batch: Inbound[], checkpoint?: Checkpoint): Promise<void>;
  /** Reads a checkpoint written earlier with accept(). */
  checkpoint(key: string): Promise<Checkpoint['value'] | undefined>;
}

/**
 * `pull`: the adapter reads a source it owns (IMAP, files) and resumes from checkpoints.
 * `push`: messages are handed to it (webhooks, uploads, SMTP); its answer to the sender is the
 * acknowledgement, given only once `PushSink.submit` resolved.
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
  remoteAddress?: string;
}

export interface PushResponse {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON unless it is a string or Buffer. */
  body?: unknown;
}

/** The outcome of one pushed message once `submit` resolved. */
export interface PushResult {
  /** The outbox item id (stable: a duplicate answers the id of the first item). */
  id: string;
  /** Already stored for this route (same provider event id or same SHA-256 of the bytes). */
  duplicate: boolean;
  /** Stored as a dead letter (unparseable; raw bytes kept) rather than queued. */
  dead?: { code: string; message: string };
  /**
   * A duplicate by its event id whose bytes differ from the first item's (a provider re-encoding
   * a retry, or an upload reusing an Idempotency-Key for other content): nothing was stored.
   */
  conflict?: boolean;
}

/** What a push adapter's endpoints hand messages to. */
export interface PushSink {
  /**
   * Resolves once every message is durable (concurrent calls share one commit), with one
   * result per message in order. Rejects with a GatewayError whose code is
   * MAILGATE_ERR_INTAKE_UNAVAILABLE (store failing) or MAILGATE_ERR_INTAKE_OUTBOX_FULL (over
   * the depth limit) and nothing stored: the endpoint answers 503 with Retry-After.
   */
  submit(batch: Inbound[], signal?: AbortSignal): Promise<PushResult[]>;
  /** The state of an item by id (upload status). */
  item(id: string): Promise<PushItemState | undefined>;
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
  handle(req: PushRequest, sink: PushSink, params: Record<string, string>): Promise<PushResponse>;
}

export interface Adapter {
  readonly kind: string;
  /** The instance name from the configuration (for IMAP: `imap`, its accounts report health). */
  readonly name: string;
  readonly mode: AdapterMode;
  /** Runs until the input is exhausted (files) or the signal aborts (services). Push adapters resolve when the signal aborts. */
  start(sink: IntakeSink, signal: AbortSignal): Promise<void>;
  /** Health lines for readiness and status; none means healthy while running. */
  health?(): AdapterHealth[];
  /** Actions to apply once the API accepted messages of this adapter (IMAP seen/flag/move). Never rejects. */
  afterDelivery?(origins: Origin[]): Promise<AfterDeliveryResult>;
  /** Push adapters: the HTTP endpoints the server mounts for them. */
  endpoints?(): PushEndpoint[];
}
