/**
 * Delivery, in one place: the loop that claims a route's ready outbox items, settles one
 * outcome per item (delivered, unchanged, retry later, dead letter: `verdictOf`) and pauses a
 * refused route (loop.ts), and the route's sender that turns claimed items into one
 * `deliverBatch` call of the batcher (send.ts; packing, splitting and the ledger live in
 * src/batcher/deliver-batch.ts).
 */
export {
  createDelivery,
  defaultRetryDelay,
  predictionsOf,
  verdictOf,
  DEFAULT_PAUSE_MS,
  ITEM_BACKOFF,
  PAUSE_CODES,
  type BatchResult,
  type DeliverFn,
  type DeliveryCounters,
  type DeliveryLoop,
  type DeliveryOptions,
  type ItemOutcome,
  type Verdict,
} from './loop.js';
export { checkRoutes, createDeliverFn, targetOf, type DeliverFnOptions } from './send.js';
