/**
 * How stored items reach delivery. Every stored item ends delivery's idle wait (it goes out
 * at once rather than after `idleMs`). After a partial batch delivery also waits `flush_ms`,
 * so that single messages arriving meanwhile (push calls, a mailbox's new mail) share one
 * request; a pull call of at least PULL_BATCH_ITEMS items (an IMAP backfill chunk, a batch of
 * a file) is a batch on its own and ends that wait too: lingering for more only delayed it, and
 * the last chunk of a backfill waited up to `flush_ms` for mail that was not coming.
 */
import type { DeliveryLoop } from '../pipeline/delivery/index.js';
import type { RuntimeEvents } from '../pipeline/events.js';

/** Items of one pull call from which it goes out without the flush wait (the IMAP default batch_size). */
export const PULL_BATCH_ITEMS = 100;

export function wakeDelivery(events: RuntimeEvents, delivery: Pick<DeliveryLoop, 'wake' | 'flush'>): void {
  // A call's items are reported one after another in one go: counted until the next microtask.
  let pulled = 0;
  events.on('item:stored', (e) => {
    if (e.outcome !== 'queued') return;
    delivery.wake();
    if (e.via !== 'pull' || pulled++ > 0) return;
    queueMicrotask(() => {
      if (pulled >= PULL_BATCH_ITEMS) delivery.flush();
      pulled = 0;
    });
  });
}
