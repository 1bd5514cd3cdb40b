/** Metrics and progress logs of the service: intake per (route, adapter), delivery per route, gauges on scrape. */
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { DeliveryCounters, DeliveryOptions } from '../pipeline/delivery.js';
import type { Intake } from '../pipeline/intake.js';
import type { IntakeSink } from '../pipeline/types.js';
import type { Store } from '../store/types.js';
import type { ServiceAdapters } from './adapters.js';

/**
 * The intake sink handed to adapters, counting per (route, adapter). Parsed and queued counts
 * come from the intake's cumulative counters around each accept (exact while accepts do not overlap).
 */
export function countingSink(intake: Intake, metrics: Metrics): IntakeSink {
  return {
    checkpoint: (key) => intake.checkpoint(key),
    async accept(batch, checkpoint) {
      if (batch.length === 0) return intake.accept(batch, checkpoint);
      const labels = { route: batch[0]!.route, adapter: batch[0]!.origin.adapter };
      const before = { parsed: intake.counters.parsed, queued: intake.counters.queued };
      await intake.accept(batch, checkpoint);
      metrics.messagesReceived.inc(labels, batch.length);
      metrics.messagesParsed.inc(labels, Math.max(0, intake.counters.parsed - before.parsed));
      metrics.messagesQueued.inc(labels, Math.max(0, intake.counters.queued - before.queued));
    },
  };
}

/** Delivery's onBatch: metric deltas per route and one log line per delivered batch. */
export function observeDelivery(metrics: Metrics, logger: Logger): { onBatch: NonNullable<DeliveryOptions['onBatch']> } {
  let last: DeliveryCounters = { delivered: 0, unchanged: 0, rejected: 0, retried: 0, aiUnits: 0 };
  return {
    onBatch(route, c) {
      const d = { delivered: c.delivered - last.delivered, unchanged: c.unchanged - last.unchanged, rejected: c.rejected - last.rejected, retried: c.retried - last.retried, aiUnits: c.aiUnits - last.aiUnits };
      last = { ...c };
      const labels = { route: route.name };
      if (d.delivered > 0) metrics.messagesDelivered.inc(labels, d.delivered);
      if (d.unchanged > 0) metrics.messagesUnchanged.inc(labels, d.unchanged);
      if (d.rejected > 0) {
        metrics.messagesRejected.inc(labels, d.rejected);
        metrics.messagesDeadLettered.inc(labels, d.rejected);
      }
      if (d.aiUnits > 0) metrics.aiUnits.inc(labels, d.aiUnits);
      const target = route.mode === 'sync' ? route.source : route.dataset;
      logger.info({ route: route.name, target, ...d, total: { delivered: c.delivered, unchanged: c.unchanged, rejected: c.rejected } }, `delivered ${d.delivered} comment(s) to ${target ?? route.name}`);
    },
  };
}

/** Gauges filled on scrape: outbox depth per route and the connection state of each IMAP account. */
export function observeStore(metrics: Metrics, store: Store, adapters: ServiceAdapters, routes: Iterable<string>): void {
  const names = [...routes];
  metrics.outboxDepth.collect(async () => {
    const counts = await store.outboxCounts();
    metrics.outboxDepth.reset();
    for (const route of names) metrics.outboxDepth.set({ route }, 0);
    for (const c of counts) if (c.status === 'queued') metrics.outboxDepth.set({ route: c.route }, c.count);
  });
  const imap = adapters.imap;
  if (imap) {
    metrics.imapConnectionState.collect(() => {
      for (const h of imap.health()) metrics.setImapConnectionState(h.account, h.state);
    });
  }
}
