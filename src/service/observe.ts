/**
 * Metrics and progress logs of the service: intake and delivery per (route, adapter), API
 * requests per (endpoint, status), gauges on scrape. An observer never throws into the pipeline.
 */
import type { AttemptInfo } from '../api/client.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { PAUSE_CODES, type DeliverFn, type DeliveryCounters, type DeliveryOptions } from '../pipeline/delivery.js';
import type { Intake } from '../pipeline/intake.js';
import type { PushSinkOptions } from '../pipeline/push-sink.js';
import type { IntakeSink } from '../pipeline/types.js';
import type { Store } from '../store/types.js';
import type { AdapterEntry } from '../runtime/adapters.js';

/**
 * The intake sink handed to adapters, counting per (route, adapter). Parsed and queued counts
 * come from the intake's cumulative counters around each accept (exact while accepts do not overlap).
 */
export function countingSink(intake: Intake, metrics: Metrics): IntakeSink {
  return {
    checkpoint: (key) => intake.checkpoint(key),
    async accept(batch, checkpoint, fence) {
      if (batch.length === 0) return intake.accept(batch, checkpoint, fence);
      const labels = { route: batch[0]!.route, adapter: batch[0]!.origin.adapter };
      const before = { parsed: intake.counters.parsed, queued: intake.counters.queued, failed: intake.counters.failed };
      await intake.accept(batch, checkpoint, fence);
      metrics.messagesReceived.inc(labels, batch.length);
      metrics.messagesParsed.inc(labels, Math.max(0, intake.counters.parsed - before.parsed));
      metrics.messagesQueued.inc(labels, Math.max(0, intake.counters.queued - before.queued));
      // Unparseable messages are stored as dead letters with their raw bytes.
      const failed = intake.counters.failed - before.failed;
      if (failed > 0) metrics.messagesDeadLettered.inc(labels, failed);
    },
  };
}

/**
 * The push sink's onCommit: pushed messages (webhooks, uploads) counted per (route, adapter) like
 * pulled ones. A duplicate (a provider's retry) is received again but neither parsed nor queued.
 */
export function countingPush(metrics: Metrics): NonNullable<PushSinkOptions['onCommit']> {
  return (committed) => {
    try {
      for (const { inbound, result } of committed) {
        const labels = { route: inbound.route, adapter: inbound.origin.adapter };
        metrics.messagesReceived.inc(labels);
        if (result.duplicate) continue;
        if (result.dead) metrics.messagesDeadLettered.inc(labels);
        else {
          metrics.messagesParsed.inc(labels);
          metrics.messagesQueued.inc(labels);
        }
      }
    } catch {
      // Metrics must never fail an intake.
    }
  };
}

/** The `status` label of an API attempt: the HTTP status, else `timeout`, `aborted` or `network`. */
export function attemptStatus(info: AttemptInfo): string {
  const code = info.error?.code;
  if (code === 'MAILGATE_ERR_API_TIMEOUT') return 'timeout';
  if (info.status !== undefined) return String(info.status);
  return code === 'MAILGATE_ERR_API_ABORTED' ? 'aborted' : 'network';
}

/** The API client's onAttempt: every attempt (retries included) counted by endpoint and status, and its latency by the same labels. */
export function observeApi(metrics: Metrics): (info: AttemptInfo) => void {
  return (info) => {
    try {
      const labels = { endpoint: info.endpoint, status: attemptStatus(info) };
      metrics.apiRequests.inc(labels);
      metrics.apiRequestDuration.observe(labels, Math.max(0, info.durationMs) / 1000);
    } catch {
      // Metrics must never fail a request.
    }
  };
}

/**
 * Wraps delivery's DeliverFn: counts each item's outcome per (route, adapter of its origin),
 * by the rules delivery settles them with (a retry outcome on the last allowed attempt is a
 * dead letter), and the AI units per route.
 */
export function countingDeliver(deliver: DeliverFn, metrics: Metrics, maxItemAttempts: number): DeliverFn {
  return async (route, items) => {
    const result = await deliver(route, items);
    try {
      const byId = new Map(items.map((i) => [String(i.id), i]));
      for (const o of result.outcomes) {
        const item = byId.get(o.key);
        if (!item) continue;
        const labels = { route: route.name, adapter: item.origin.adapter };
        if (o.status === 'delivered') metrics.messagesDelivered.inc(labels);
        else if (o.status === 'unchanged') metrics.messagesUnchanged.inc(labels);
        else if (o.status === 'rejected') {
          metrics.messagesRejected.inc(labels);
          metrics.messagesDeadLettered.inc(labels);
        } else if (!PAUSE_CODES.has(o.code) && item.attempts + 1 >= maxItemAttempts) metrics.messagesDeadLettered.inc(labels);
      }
      if (result.aiUnits > 0) metrics.aiUnits.inc({ route: route.name }, result.aiUnits);
    } catch {
      // Metrics must never fail a delivery.
    }
    return result;
  };
}

/** Delivery's onBatch: one log line per delivered batch (metrics come from countingDeliver). */
export function observeDelivery(logger: Logger): { onBatch: NonNullable<DeliveryOptions['onBatch']> } {
  let last: DeliveryCounters = { delivered: 0, unchanged: 0, rejected: 0, retried: 0, aiUnits: 0, aiUnitsEstimated: 0 };
  return {
    onBatch(route, c) {
      const d = {
        delivered: c.delivered - last.delivered,
        unchanged: c.unchanged - last.unchanged,
        rejected: c.rejected - last.rejected,
        retried: c.retried - last.retried,
        aiUnits: c.aiUnits - last.aiUnits,
      };
      last = { ...c };
      const target = route.mode === 'sync' ? route.source : route.dataset;
      logger.info(
        { route: route.name, target, ...d, total: { delivered: c.delivered, unchanged: c.unchanged, rejected: c.rejected } },
        `delivered ${d.delivered} comment(s) to ${target ?? route.name}`,
      );
    },
  };
}

/**
 * Gauges filled on scrape: outbox depth per route, and the connection state of each health line
 * of a pull adapter (an IMAP account), labelled by the line's name.
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
    metrics.imapConnectionState.collect(() => {
      for (const e of connected) for (const h of e.adapter.health!()) metrics.setImapConnectionState(h.name, h.state);
    });
  }
}
