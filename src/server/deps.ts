/**
 * What the HTTP server needs from the rest of mailgate, and nothing more. The service
 * adapts its store, preview and adapters to this; tests pass small real implementations.
 * Item shapes are passed through to the JSON answer as they are (binary fields excepted).
 */
import type { Logger } from '../logger.js';
import type { Origin } from '../model/origin.js';
import type { ItemQuery, ItemRaw, ItemSummary } from '../store/types.js';
import type { ConsoleEventBus } from './console-events.js';
import type { ItemDetail, MailboxView, Overview } from './console-types.js';
import type { Metrics } from '../metrics.js';
import type { PushRoutes } from './push.js';

export interface Check {
  ok: boolean;
  /** A word such as `idle`, `backoff`, `failed`, `unreachable`: shown on the open /readyz. */
  state?: string;
  /** The MAILGATE_* code of the failure: shown on the open /readyz. */
  code?: string;
  /** Error text (may name users, hosts, tenants): only behind the admin keys (GET /api/status), never on /readyz. */
  detail?: string;
}

export interface ReadyReport {
  ok: boolean;
  /** e.g. `{ store: { ok: true }, "imap:support-inbox": { ok: false, state: "backoff", code: "MAILGATE_ERR_IMAP_AUTH", detail: "…" } }` */
  checks: Record<string, Check>;
}

/** `GET /api/status`: what is configured and how it is doing. Extra fields are passed through. */
export interface StatusReport {
  /** e.g. `{ kind: 'sqlite' }` */
  store: Record<string, unknown>;
  /** Per route: outbox counts by status and cumulative counters (enqueued, delivered, unchanged, dead-lettered, AI units). */
  routes: Array<Record<string, unknown> & { route: string }>;
  /** Per adapter instance: kind, name, health state and detail. */
  adapters: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

export interface DeadLetterQuery {
  route?: string;
  /** 1..10000. */
  limit: number;
  /** Cursor: only ids greater than this. */
  after?: number;
}

/** At least one field set; set fields combine with AND; `all` only alone. */
export interface DeadLetterPurge {
  ids?: number[];
  route?: string;
  olderThan?: Date;
  all?: true;
}

export interface DeadLetterView {
  id: number;
  origin: Origin;
  [key: string]: unknown;
}

/** A dead letter in full; `raw` (the original bytes) is served by GET /api/dlq/:id/raw only. */
export interface DeadLetterDetailView extends DeadLetterView {
  raw?: Uint8Array;
}

export interface DeadLetters {
  list(query: DeadLetterQuery): Promise<DeadLetterView[]>;
  get(id: number): Promise<DeadLetterDetailView | undefined>;
  /** Re-parses the kept raw bytes and queues the item again; undefined (or MAILGATE_ERR_STORE_NOT_FOUND) when `id` is no dead letter. */
  replay(id: number): Promise<Record<string, unknown> | undefined>;
  /** Returns how many were deleted. */
  purge(filter: DeadLetterPurge): Promise<number>;
}

/** `GET /api/predictions`: stored predictions of predict routes, by increasing id. */
export interface Predictions {
  /** Same query shape as the dead-letter list: route, limit 1..10000, ids greater than `after`. */
  list(query: DeadLetterQuery): Promise<Array<{ id: number; [key: string]: unknown }>>;
}

/** Options of one preview request. */
export interface PreviewRequest {
  /** Preview as this route would build the document (its user properties, body and header form). */
  route?: string;
}

/** What `POST /api/preview` answers: the document exactly as it would be sent and the resulting comment. */
export interface PreviewResponse {
  document: unknown;
  comment: unknown;
  /** Thread properties of the comment as the service would compute them (null when unknown). */
  thread_properties: unknown;
  warnings: Array<{ code: string; message: string }>;
}

export interface ThreadView {
  comment: unknown;
  thread_properties: unknown;
}

/** The console's data (docs/server.md "The console API"). */
export interface ConsoleDeps {
  /** Items newest first (the store's query; the server maps rows to JSON). */
  listItems(query: ItemQuery): Promise<ItemSummary[]>;
  /** One item in full; undefined when there is no such item. */
  item(id: number): Promise<ItemDetail | undefined>;
  /** The kept raw bytes of an item; undefined when there is no such item. */
  raw(id: number): Promise<ItemRaw | undefined>;
  overview(): Promise<Overview>;
  /** What GET /api/events streams. */
  events: ConsoleEventBus;
}

export interface ServerDeps {
  /** Readiness: store reachable, adapters healthy, not shutting down. */
  ready(): Promise<ReadyReport>;
  status(): Promise<StatusReport>;
  /** Push adapters' endpoints and the sink they hand messages to; omitted or empty: none mounted. */
  push?: PushRoutes;
  deadLetters: DeadLetters;
  /** Omitted: GET /api/predictions answers 404. */
  predictions?: Predictions;
  /** Omitted: the console endpoints (/api/items, /api/events, /api/overview) answer 404. */
  console?: ConsoleDeps;
  /** The stored document, comment preview and thread properties of an outbox item; undefined when unknown. */
  previewItem(id: number): Promise<Record<string, unknown> | undefined>;
  /** Parses one raw RFC 5322 message; stores and sends nothing. Throws coded errors (MAILGATE_ERR_MIME_*, …). */
  preview(raw: Uint8Array, request: PreviewRequest): Promise<PreviewResponse>;
  /**
   * Each comment as it would look within the given set (generated `Position in Thread`
   * updated) with its thread properties, in input order: the preview page's multi-file view.
   */
  threads(comments: unknown[]): Promise<ThreadView[]>;
  /** Mailbox states (GET /api/mailboxes, POST /api/mailboxes/:mailbox/enable|disable); omitted: 404. */
  mailboxes?: {
    list(): Promise<MailboxView[]>;
    /** Enables or disables by command; false when no such mailbox is known. */
    set(mailbox: string, enabled: boolean): Promise<boolean>;
  };
  /** POST /api/routes/:route/resume: lifts a route's pause; undefined when no such route, false when it was not paused. */
  routes?: { resume(route: string): Promise<boolean | undefined> };
  metrics: Metrics;
  /** Omit (or pass a disabled logger) for silence. */
  logger?: Logger;
}
