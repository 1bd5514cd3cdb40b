/**
 * Metrics and progress logs of the service, as listeners of the runtime's event stream:
 * intake and delivery per (route, adapter), API requests per (endpoint, status), AI units per
 * route, one log line per delivered batch; gauges on scrape. A listener's
 * exception never reaches the pipeline (RuntimeEvents reports it).
 */
import type { AttemptInfo } from '../api/client.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { RuntimeEvents } from '../pipeline/events.js';
import { POISON_CODE } from '../pipeline/poison.js';
import type { Store } from '../store/types.js';
import type { AdapterEntry } from '../runtime/adapters.js';

/**
 * Messages counted per (route, adapter): every message handed in is received; a duplicate (a
 * provider's retry, a re-read file) is neither parsed nor queued; an unreadable or unparseable
 * one is a dead letter, as is an item delivery gave up (`rejected` too when the API refused the
 * document itself).
 */
export function countMessages(events: RuntimeEvents, metrics: Metrics): void {
  events.on('item:stored', (e) => {
    const labels = { route: e.route, adapter: e.adapter };
    metrics.messagesReceived.inc(labels);
    if (e.outcome === 'dead') {
      metrics.messagesDeadLettered.inc(labels);
      if (e.error?.code === POISON_CODE) metrics.messagesPoisoned.inc(labels);
    } else if (e.outcome === 'queued') {
      metrics.messagesParsed.inc(labels);
      metrics.messagesQueued.inc(labels);
    }
  });
  events.on('item:filtered', (e) => metrics.messagesFiltered.inc({ route: e.route, adapter: e.adapter, reason: e.reason }));
  events.on('item:delivered', (e) => metrics.messagesDelivered.inc({ route: e.route, adapter: e.adapter }));
  events.on('item:unchanged', (e) => metrics.messagesUnchanged.inc({ route: e.route, adapter: e.adapter }));
  events.on('item:dead', (e) => {
    const labels = { route: e.route, adapter: e.adapter };
    if (e.reason === 'rejected') metrics.messagesRejected.inc(labels);
    metrics.messagesDeadLettered.inc(labels);
  });
  events.on('delivery:batch', (e) => {
    if (e.aiUnits > 0) metrics.aiUnits.inc({ route: e.route }, e.aiUnits);
  });
}

/** The `status` label of an API attempt: the HTTP status, else `timeout`, `aborted` or `network`. */
export function attemptStatus(info: AttemptInfo): string {
  const code = info.error?.code;
  if (code === 'MAILGATE_ERR_API_TIMEOUT') return 'timeout';
  if (info.status !== undefined) return String(info.status);
  return code === 'MAILGATE_ERR_API_ABORTED' ? 'aborted' : 'network';
}

/** Every API attempt (retries included) counted by endpoint and status, and its latency by the same labels. */
export function countApiAttempts(events: RuntimeEvents, metrics: Metrics): void {
  events.on('api:attempt', (info) => {
    const labels = { endpoint: info.endpoint, status: attemptStatus(info) };
    metrics.apiRequests.inc(labels);
    metrics.apiRequestDuration.observe(labels, Math.max(0, info.durationMs) / 1000);
  });
}

/** The service's log line per delivered batch: what it added, and the totals of this process. */
export function logDelivery(events: RuntimeEvents, logger: Logger): void {
  const total = { delivered: 0, unchanged: 0, rejected: 0 };
  events.on('delivery:batch', (e) => {
    total.delivered += e.delivered;
    total.unchanged += e.unchanged;
    total.rejected += e.rejected;
    const { route, target, delivered, unchanged, rejected, retried, aiUnits } = e;
    logger.info(
      { route, target, delivered, unchanged, rejected, retried, aiUnits, total: { ...total } },
      `delivered ${delivered} comment(s) to ${target}`,
    );
  });
}

/**
 * mailgate_route_paused{route}: 0 for every route from the start, 1 from the moment delivery of
 * a route pauses (401/403, an unknown source or transform tag, …) until it resumes.
 */
export function trackPausedRoutes(events: RuntimeEvents, metrics: Metrics, routes: Iterable<string>): void {
  for (const route of routes) metrics.routePaused.set({ route }, 0);
  events.on('route:paused', (e) => metrics.routePaused.set({ route: e.route }, 1));
  events.on('route:resumed', (e) => metrics.routePaused.set({ route: e.route }, 0));
}

/**
 * Gauges filled on scrape: outbox depth per route, and the state of each health line of a pull
 * adapter (an IMAP account, a Graph or Gmail mailbox) by kind and the line's name, and under the
 * gauge its kind declares (`health.metric`).
 */
export function observeStore(metrics: Metrics, store: Store, adapters: readonly AdapterEntry[], routes: Iterable<string>): void {
  const names = [...routes];
  metrics.outboxDepth.collect(async () => {
    const counts = await store.outboxCounts();
    metrics.outboxDepth.reset();
    for (const route of names) metrics.outboxDepth.set({ route }, 0);
    for (const c of counts) if (c.status === 'queued') metrics.outboxDepth.set({ route: c.route }, c.count);
  });
  const connected = adapters.filter((e) => e.adapter.mode === 'pull' && e.adapter.health !== undefined);
  if (connected.length > 0) {
    metrics.collectAdapterStates(() => {
      for (const e of connected) for (const h of e.adapter.health!()) metrics.setAdapterState(e.adapter.kind, h.name, h.state);
    });
  }
}

/** While the store is full, how often a space probe writes (`probeSpace`), in ms. */
export const SPACE_PROBE_MS = 5_000;
/** What a space probe writes: about one small message's document and preview. */
export const SPACE_PROBE_BYTES = 64 * 1024;

/**
 * Watches the store's record of writes failing for want of space (`store.health()`): one error
 * line when writes start failing, one line when they succeed again. While full it probes every
 * `probeMs` with a small write (`store.probeSpace`), so `full` clears when space returns even
 * when no sender, mailbox or delivery writes meanwhile. Returns the stop function.
 */
export function watchStoreSpace(store: Store, logger: Logger, o: { intervalMs?: number; probeMs?: number } = {}): () => void {
  const intervalMs = o.intervalMs ?? 1_000;
  const probeMs = o.probeMs ?? SPACE_PROBE_MS;
  let since: string | undefined;
  let probedAt = 0;
  let probing = false;
  const probe = () => {
    if (probing || Date.now() - probedAt < probeMs) return;
    probing = true;
    probedAt = Date.now();
    // A refused probe is the expected answer while full: the guard records it, nothing to log.
    store
      .probeSpace(SPACE_PROBE_BYTES)
      .catch(() => undefined)
      .finally(() => (probing = false));
  };
  const timer = setInterval(() => {
    const { full } = store.health();
    if (full !== undefined && since === undefined) {
      since = full.since;
      probedAt = Date.now();
      logger.error(
        { code: 'MAILGATE_ERR_STORE_FULL', method: full.method, since: full.since, err: full.message },
        'store full: writes fail for want of space; senders are asked to retry and nothing is acknowledged until space returns',
      );
    } else if (full === undefined && since !== undefined) {
      logger.info({ since }, 'store writable again: intake and delivery resume');
      since = undefined;
    }
    if (since !== undefined) probe();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
