/** Packing documents into requests, property-override rules, split-on-rejection (the ledger: src/ledger/). */
export { deliverBatch, isSplittable, MAX_SPLIT_REQUESTS, type DeliverBatchOptions } from './deliver-batch.js';
export { pack, requestBytes, resolveBatchLimits, type PackLimits, type Packing } from './pack.js';
export { applyPropertyRules, checkRouteProperties, collidingKeys, routePropertyProblems, type PropertyResult } from './properties.js';
export { sendSplitting, newSplitState, type PartResult, type SendResult, type SplitOptions, type SplitState } from './split.js';
export type {
  DeliveryItem,
  DeliveryReport,
  ItemOutcome,
  OnPropertyConflict,
  PredictTarget,
  RouteProperties,
  SyncCounts,
  SyncTarget,
  Target,
} from './types.js';
