/**
 * The named mailgate metrics, served at GET /metrics. Intake, delivery, the API client and
 * the adapters update them; docs/server.md lists them with their meaning.
 */
import { Counter, Gauge, Histogram, Registry } from './server/prometheus.js';

export { Counter, Gauge, Histogram, Registry, PROMETHEUS_CONTENT_TYPE, DEFAULT_SECONDS_BUCKETS } from './server/prometheus.js';
export type { Labels, Collector } from './server/prometheus.js';

export interface Metrics {
  readonly registry: Registry;
  /** Raw messages handed to intake by an adapter. */
  messagesReceived: Counter<'route' | 'adapter'>;
  /** Messages parsed into a document (the rest failed parsing and were dead-lettered). */
  messagesParsed: Counter<'route' | 'adapter'>;
  /** Outbox items newly written (duplicates of stored items are not counted). */
  messagesQueued: Counter<'route' | 'adapter'>;
  /** Documents the API accepted, by route and the adapter the message came from. */
  messagesDelivered: Counter<'route' | 'adapter'>;
  /** Documents skipped because the ledger showed the same text and properties (nothing billed). */
  messagesUnchanged: Counter<'route' | 'adapter'>;
  /** Documents the API rejected (400/422, isolated by splitting the batch); retries exhausted count as dead-lettered only. */
  messagesRejected: Counter<'route' | 'adapter'>;
  /** Items moved to the dead letters for any reason: rejected, unparseable, retries exhausted. */
  messagesDeadLettered: Counter<'route' | 'adapter'>;
  /** Items waiting for delivery; filled on scrape when a collector is set with `outboxDepth.collect()`. */
  outboxDepth: Gauge<'route'>;
  /** Requests to the Text Analytics API by endpoint and outcome (HTTP status, `network` or `timeout`). */
  apiRequests: Counter<'endpoint' | 'status'>;
  /** Latency of requests to the Text Analytics API, in seconds, by endpoint and outcome (as apiRequests). */
  apiRequestDuration: Histogram<'endpoint' | 'status'>;
  /** 1 for the current connection state of each IMAP account, 0 for the others; use setImapConnectionState. */
  imapConnectionState: Gauge<'account' | 'state'>;
  /** AI units billed (created comments and updates whose text changed). */
  aiUnits: Counter<'route'>;
  /** Requests answered by mailgate's own HTTP server, by route pattern. */
  httpRequests: Counter<'method' | 'path' | 'status'>;
  /** Scrape-time collectors that failed or timed out. */
  collectErrors: Counter<'metric'>;
  /** Marks `state` as the current state of `account` (1) and every other state seen for it as 0. */
  setImapConnectionState(account: string, state: string): void;
}

export interface MetricsOptions {
  /** Adds process_start_time_seconds, process_resident_memory_bytes and nodejs_heap_used_bytes. Default true. */
  processMetrics?: boolean;
  /** Bound on one scrape-time collector, in ms. Default 5000. */
  collectTimeoutMs?: number;
}

/** The states the IMAP adapter reports (ImapState in adapters/imap/health.ts); any other string is accepted too. */
export const IMAP_CONNECTION_STATES = ['connecting', 'idle', 'syncing', 'backoff', 'auth_failed', 'stopped'] as const;

function addProcessMetrics(registry: Registry): void {
  const start = registry.gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch, in seconds.' });
  const rss = registry.gauge({ name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.' });
  const heap = registry.gauge({ name: 'nodejs_heap_used_bytes', help: 'V8 heap in use, in bytes.' });
  start.set({}, Math.round(Date.now() / 1000 - process.uptime()));
  rss.collect(() => rss.set({}, process.memoryUsage.rss()));
  heap.collect(() => heap.set({}, process.memoryUsage().heapUsed));
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  let collectErrors: Counter<'metric'> | undefined;
  const registry = new Registry({
    onCollectError: (metric) => collectErrors?.inc({ metric }),
    ...(options.collectTimeoutMs === undefined ? {} : { collectTimeoutMs: options.collectTimeoutMs }),
  });
  const routeAdapter = ['route', 'adapter'] as const;
  const route = ['route'] as const;
  const m = {
    registry,
    messagesReceived: registry.counter({ name: 'mailgate_messages_received_total', help: 'Raw messages handed to intake by an adapter.', labelNames: routeAdapter }),
    messagesParsed: registry.counter({ name: 'mailgate_messages_parsed_total', help: 'Messages parsed into a document.', labelNames: routeAdapter }),
    messagesQueued: registry.counter({ name: 'mailgate_messages_queued_total', help: 'Outbox items newly written for delivery.', labelNames: routeAdapter }),
    messagesDelivered: registry.counter({ name: 'mailgate_messages_delivered_total', help: 'Documents the API accepted.', labelNames: routeAdapter }),
    messagesUnchanged: registry.counter({ name: 'mailgate_messages_unchanged_total', help: 'Documents skipped because text and properties were unchanged (not billed).', labelNames: routeAdapter }),
    messagesRejected: registry.counter({ name: 'mailgate_messages_rejected_total', help: 'Documents the API rejected with 400 or 422.', labelNames: routeAdapter }),
    messagesDeadLettered: registry.counter({ name: 'mailgate_messages_dead_lettered_total', help: 'Items moved to the dead letters for any reason: rejected, unparseable, retries exhausted.', labelNames: routeAdapter }),
    outboxDepth: registry.gauge({ name: 'mailgate_outbox_depth', help: 'Items waiting for delivery.', labelNames: route }),
    apiRequests: registry.counter({ name: 'mailgate_api_requests_total', help: 'Requests to the Text Analytics API by endpoint and HTTP status (or network, timeout).', labelNames: ['endpoint', 'status'] }),
    apiRequestDuration: registry.histogram({ name: 'mailgate_api_request_duration_seconds', help: 'Latency of requests to the Text Analytics API in seconds, by endpoint and HTTP status (or network, timeout).', labelNames: ['endpoint', 'status'] }),
    imapConnectionState: registry.gauge({ name: 'mailgate_imap_connection_state', help: 'Current connection state of each IMAP account (1 = current).', labelNames: ['account', 'state'] }),
    aiUnits: registry.counter({ name: 'mailgate_ai_units_total', help: 'AI units billed: created comments and updates whose text changed.', labelNames: route }),
    httpRequests: registry.counter({ name: 'mailgate_http_requests_total', help: 'Requests answered by the mailgate HTTP server, by route pattern.', labelNames: ['method', 'path', 'status'] }),
    collectErrors: registry.counter({ name: 'mailgate_metrics_collect_errors_total', help: 'Scrape-time collectors that failed or timed out.', labelNames: ['metric'] }),
  };
  collectErrors = m.collectErrors;
  if (options.processMetrics ?? true) addProcessMetrics(registry);
  const seen = new Map<string, Set<string>>();
  const setImapConnectionState = (account: string, state: string): void => {
    const states = seen.get(account) ?? new Set(IMAP_CONNECTION_STATES);
    states.add(state);
    seen.set(account, states);
    for (const s of states) m.imapConnectionState.set({ account, state: s }, s === state ? 1 : 0);
  };
  return { ...m, setImapConnectionState };
}
