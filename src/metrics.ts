/**
 * The named mailgate metrics, served at GET /metrics. Intake, delivery, the API client and
 * the adapters update them; docs/server.md lists them with their meaning.
 *
 * Built on prom-client with one Registry per createMetrics() call, never prom-client's global
 * default registry: tests run several services in one process, and each must count alone.
 * The server only serializes `registry`.
 */
import { collectDefaultMetrics, Counter as PromCounter, Gauge as PromGauge, Histogram as PromHistogram, Registry } from 'prom-client';
import { ADAPTER_KINDS, KINDS, type AdapterKind } from '../adapters/config.js';
import type { KindDefinition } from './config/kind.js';
import { parseLimit } from './limits.js';

const isAdapterKind = (kind: string): kind is AdapterKind => Object.hasOwn(KINDS, kind);

export { Registry } from 'prom-client';

/** Every label of the metric and no other (prom-client would accept a partial set as a new series). */
export type Labels<L extends string> = Readonly<Record<L, string>>;
export type Collector = () => void | Promise<void>;

/** What callers may do with a counter. */
export interface Counter<L extends string> {
  inc(labels: Labels<L>, by?: number): void;
}

/** What callers may do with a histogram. */
export interface Histogram<L extends string> {
  observe(labels: Labels<L>, value: number): void;
}

/** A gauge that may be filled on scrape. */
export interface Gauge<L extends string> {
  set(labels: Labels<L>, value: number): void;
  /** Forgets every series (a collector calls this before setting the current ones). */
  reset(): void;
  /** Runs `fn` before each scrape, bounded in time; it sets the current values (e.g. from the store). */
  collect(fn: Collector): void;
}

/** Seconds: fit for HTTP requests that take milliseconds to minutes (the API deadline is 240 s). */
export const DEFAULT_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 240] as const;

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
  /** Messages set aside as poison (MAILGATE_ERR_INTAKE_POISON after parsing.poison_after attempts); dead-lettered too. */
  messagesPoisoned: Counter<'route' | 'adapter'>;
  /** Messages a mailbox's filter left out (never parsed, stored or billed), by reason: participants, auto_reply, mailing_list, since. */
  messagesFiltered: Counter<'route' | 'adapter' | 'reason'>;
  /** Items waiting for delivery; filled on scrape when a collector is set with `outboxDepth.collect()`. */
  outboxDepth: Gauge<'route'>;
  /** 1 while delivery of the route is paused (a refused token, an unknown source or transform tag, …), else 0. */
  routePaused: Gauge<'route'>;
  /** Requests to the Text Analytics API by endpoint and outcome (HTTP status, `network` or `timeout`). */
  apiRequests: Counter<'endpoint' | 'status'>;
  /** Latency of requests to the Text Analytics API, in seconds, by endpoint and outcome (as apiRequests). */
  apiRequestDuration: Histogram<'endpoint' | 'status'>;
  /** 1 for the current state of each health line of an adapter (a mailbox, an account), 0 for the others seen; use setAdapterState. */
  adapterState: Gauge<'kind' | 'instance' | 'state'>;
  /** The gauges kinds declare for their health lines (`health.metric`, e.g. mailgate_imap_connection_state), by kind. */
  kindStates: ReadonlyMap<string, Gauge<string>>;
  /** AI units billed (created comments and updates whose text changed). */
  aiUnits: Counter<'route'>;
  /** Requests answered by mailgate's own HTTP server, by route pattern. */
  httpRequests: Counter<'method' | 'path' | 'status'>;
  /** Push requests refused before their body was read, by listener and reason (budget bounds, header credentials). */
  pushRefused: Counter<'listener' | 'reason'>;
  /** Scrape-time collectors that failed or timed out. */
  collectErrors: Counter<'metric'>;
  /** Marks `state` as the current state of an adapter's health line (1), and every other state seen for it as 0. */
  setAdapterState(kind: string, instance: string, state: string): void;
  /** Sets the collector that fills the adapter state gauges on each scrape. */
  collectAdapterStates(fn: () => void): void;
}

export interface MetricsOptions {
  /**
   * Adds prom-client's default process metrics (CPU, memory, file descriptors, event loop lag,
   * GC, heap) and nodejs_heap_used_bytes. Default true.
   */
  processMetrics?: boolean;
  /** Bound on one scrape-time collector, in ms. Default 5000. */
  collectTimeoutMs?: number;
}

const COLLECT_TIMEOUT_MS = 5_000;

/**
 * Runs the scrape-time collectors of one registry. Each run is bounded; a failure or timeout
 * is reported and the gauge keeps its last values, so one slow store never fails a scrape.
 */
class ScrapeCollectors {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly timeoutMs: number,
    private readonly onError: (metric: string) => void,
  ) {}

  run(metric: string, fn: Collector): Promise<void> {
    const p = this.bounded(metric, fn);
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
    return p;
  }

  /** Resolves when the runs started so far are over (the error counter waits for them, to count this scrape's). */
  async settled(): Promise<void> {
    await Promise.all([...this.running]);
  }

  private async bounded(metric: string, fn: Collector): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`collector of ${metric} took longer than ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([Promise.resolve().then(fn), timeout]);
    } catch {
      this.onError(metric);
    } finally {
      clearTimeout(timer);
    }
  }
}

function scrapeGauge<L extends string>(
  registry: Registry,
  collectors: ScrapeCollectors,
  name: string,
  help: string,
  labelNames: readonly L[],
): Gauge<L> {
  let collector: Collector | undefined;
  const gauge = new PromGauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect: () => (collector ? collectors.run(name, collector) : undefined),
  });
  return {
    set: (labels, value) => gauge.set(labels, value),
    reset: () => gauge.reset(),
    collect: (fn) => {
      collector = fn;
    },
  };
}

/** When this process started, in seconds since the Unix epoch (as prom-client computes it). */
const PROCESS_START_SECONDS = Math.round(Date.now() / 1000 - process.uptime());

function addProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  // Two names predate prom-client here and stay as dashboards know them: the start time with
  // its own HELP text (prom-client's differs by a few words), and the heap in use, which
  // prom-client calls nodejs_heap_size_used_bytes.
  registry.removeSingleMetric('process_start_time_seconds');
  new PromGauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since the Unix epoch, in seconds.',
    registers: [registry],
  }).set(PROCESS_START_SECONDS);
  new PromGauge({
    name: 'nodejs_heap_used_bytes',
    help: 'V8 heap in use, in bytes.',
    registers: [registry],
    collect() {
      this.set(process.memoryUsage().heapUsed);
    },
  });
}

function collectTimeout(value: number | undefined): number {
  return parseLimit('collectTimeoutMs', value, COLLECT_TIMEOUT_MS);
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  // Collectors run at scrape time only, when `m` below exists.
  const collectors = new ScrapeCollectors(collectTimeout(options.collectTimeoutMs), (metric) => m.collectErrors.inc({ metric }));
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new PromCounter<L>({ name, help, labelNames, registers: [registry] });
  const routeAdapter = ['route', 'adapter'] as const;
  const route = ['route'] as const;
  const apiLabels = ['endpoint', 'status'] as const;
  const m = {
    registry,
    messagesReceived: counter('mailgate_messages_received_total', 'Raw messages handed to intake by an adapter.', routeAdapter),
    messagesParsed: counter('mailgate_messages_parsed_total', 'Messages parsed into a document.', routeAdapter),
    messagesQueued: counter('mailgate_messages_queued_total', 'Outbox items newly written for delivery.', routeAdapter),
    messagesDelivered: counter('mailgate_messages_delivered_total', 'Documents the API accepted.', routeAdapter),
    messagesUnchanged: counter(
      'mailgate_messages_unchanged_total',
      'Documents skipped because text and properties were unchanged (not billed).',
      routeAdapter,
    ),
    messagesRejected: counter('mailgate_messages_rejected_total', 'Documents the API rejected with 400 or 422.', routeAdapter),
    messagesDeadLettered: counter(
      'mailgate_messages_dead_lettered_total',
      'Items moved to the dead letters for any reason: rejected, unparseable, retries exhausted.',
      routeAdapter,
    ),
    messagesPoisoned: counter(
      'mailgate_messages_poison_total',
      'Messages set aside as poison: they killed their parse worker or the process on each of parsing.poison_after attempts (dead letters too).',
      routeAdapter,
    ),
    messagesFiltered: counter(
      'mailgate_messages_filtered_total',
      "Messages a mailbox's filter left out (never parsed, stored or billed), by reason.",
      ['route', 'adapter', 'reason'] as const,
    ),
    outboxDepth: scrapeGauge(registry, collectors, 'mailgate_outbox_depth', 'Items waiting for delivery.', route),
    routePaused: scrapeGauge(
      registry,
      collectors,
      'mailgate_route_paused',
      '1 while delivery of the route is paused (a refused token, an unknown source or transform tag, ...), else 0.',
      route,
    ),
    apiRequests: counter(
      'mailgate_api_requests_total',
      'Requests to the Text Analytics API by endpoint and HTTP status (or network, timeout).',
      apiLabels,
    ),
    apiRequestDuration: new PromHistogram({
      name: 'mailgate_api_request_duration_seconds',
      help: 'Latency of requests to the Text Analytics API in seconds, by endpoint and HTTP status (or network, timeout).',
      labelNames: apiLabels,
      buckets: [...DEFAULT_SECONDS_BUCKETS],
      registers: [registry],
    }),
    adapterState: scrapeGauge(
      registry,
      collectors,
      'mailgate_adapter_state',
      'Current state of each health line of an adapter (a mailbox, an account) by kind and instance (1 = current).',
      ['kind', 'instance', 'state'] as const,
    ),
    kindStates: new Map(
      ADAPTER_KINDS.flatMap((kind) => {
        const health = (KINDS[kind] as KindDefinition).health;
        return health
          ? [
              [
                kind as string,
                scrapeGauge<string>(registry, collectors, health.metric, health.help, [health.instanceLabel, 'state']),
              ] as const,
            ]
          : [];
      }),
    ),
    aiUnits: counter('mailgate_ai_units_total', 'AI units billed: created comments and updates whose text changed.', route),
    httpRequests: counter('mailgate_http_requests_total', 'Requests answered by the mailgate HTTP server, by route pattern.', [
      'method',
      'path',
      'status',
    ] as const),
    pushRefused: counter(
      'mailgate_push_refused_total',
      'Push requests refused before their body was read, by listener and reason (requests, bytes, client, unauthorized).',
      ['listener', 'reason'] as const,
    ),
    // Registered after every scrape-time gauge: its collect runs after theirs started and waits
    // for them, so a collector failing in this scrape is counted in this scrape.
    collectErrors: new PromCounter({
      name: 'mailgate_metrics_collect_errors_total',
      help: 'Scrape-time collectors that failed or timed out.',
      labelNames: ['metric'] as const,
      registers: [registry],
      collect: () => collectors.settled(),
    }),
  };
  if (options.processMetrics ?? true) addProcessMetrics(registry);
  const seen = new Map<string, Set<string>>();
  const setAdapterState = (kind: string, instance: string, state: string): void => {
    const key = `${kind}\u0000${instance}`;
    const health = isAdapterKind(kind) ? (KINDS[kind] as KindDefinition).health : undefined;
    const states = seen.get(key) ?? new Set(health?.states ?? []);
    states.add(state);
    seen.set(key, states);
    const own = health === undefined ? undefined : m.kindStates.get(kind);
    for (const s of states) {
      m.adapterState.set({ kind, instance, state: s }, s === state ? 1 : 0);
      own?.set({ [health!.instanceLabel]: instance, state: s }, s === state ? 1 : 0);
    }
  };
  const collectAdapterStates = (fn: () => void): void => {
    // Every gauge runs the collector at its own scrape, so each reads this scrape's states.
    for (const g of [m.adapterState, ...m.kindStates.values()]) g.collect(fn);
  };
  return { ...m, setAdapterState, collectAdapterStates };
}
