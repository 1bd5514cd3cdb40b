/**
 * Targets (where a route delivers), per-item outcomes and the report of one delivery.
 */
import type { ErrorCode, GatewayError, Warning } from '../errors.js';
import type { LabelThreshold, PredictedLabel, RawEmailDocument, SyncCounts, UserProperties } from '../model/index.js';
import type { ModelVersion } from '../api/paths.js';
import type { DocumentHashes } from '../ledger/index.js';

export type { SyncCounts };

/** What to do with a client property that collides with a generated one (DESIGN.md "User properties"). */
export type OnPropertyConflict = 'reject' | 'override' | 'drop';

/** The property rules of a route (YAML: user_properties, override_user_properties, on_property_conflict). */
export interface RouteProperties {
  kind: 'sync' | 'predict';
  /** Static client properties the route adds to every document. */
  userProperties?: UserProperties;
  /** sync only: generated property names the route's own values replace. */
  overrideUserProperties?: string[];
  /** Default `reject`. */
  onPropertyConflict?: OnPropertyConflict;
}

interface TargetCommon {
  transformTag: string;
  onPropertyConflict?: OnPropertyConflict;
  /** Documents per request; default and bound depend on the endpoint. */
  maxDocuments?: number;
  /** Serialized request bytes; default DEFAULT_MAX_REQUEST_BYTES. */
  maxRequestBytes?: number;
}

export interface SyncTarget extends TargetCommon {
  kind: 'sync';
  /** `project/source`. */
  source: string;
  overrideUserProperties?: string[];
}

export interface PredictTarget extends TargetCommon {
  kind: 'predict';
  /** `project/dataset`. */
  dataset: string;
  version: ModelVersion;
  threshold?: number | 'auto';
  labels?: LabelThreshold[];
}

export type Target = SyncTarget | PredictTarget;

export interface DeliveryItem {
  /** Caller's key (outbox key); outcomes carry it back. */
  key: string;
  document: RawEmailDocument;
  /**
   * The document's JSON text and ledger hashes, when the caller has them (the outbox): with
   * `validate: false`, a document whose properties need no rule is then sent as this text,
   * never parsed. Both must describe `document` exactly.
   */
  json?: string;
  hashes?: DocumentHashes;
  /** The document's comment_id, when the caller knows it without parsing. */
  commentId?: string;
}

export type ItemOutcome =
  | {
      key: string;
      status: 'delivered';
      /** The service's counts, when the request held this document alone. */
      counts?: SyncCounts;
      /** predict: this document's labels. */
      predictions?: PredictedLabel[];
      /** predict: the model that answered (null when the API names none). */
      model?: { version: number; time: string } | null;
      /** Dry run: AI units this document would cost by the ledger rule. */
      estimatedAiUnits?: number;
      warnings?: Warning[];
    }
  | { key: string; status: 'unchanged' }
  | { key: string; status: 'rejected'; code: ErrorCode; message: string; httpStatus?: number; warnings?: Warning[] }
  | { key: string; status: 'retry'; code: ErrorCode; message: string; retryAfterMs?: number };

export interface DeliveryReport {
  /** One per input item, in input order. */
  outcomes: ItemOutcome[];
  /** Sum of the service's counts over successful sync requests. */
  counts: SyncCounts;
  /**
   * AI units the API confirmed. Sync: the answers' `new + updated_text_changed`. Predict: one per
   * document answered. Dry run: 0. (docs/delivery.md "AI units reported")
   */
  aiUnits: number;
  /**
   * predict: units that failed attempts may have cost on top of `aiUnits` — attempts the
   * service may have processed before the answer was lost (no answer, deadline, 5xx, unreadable
   * 2xx), one per document each. The service bills such an attempt or not; mailgate cannot know.
   */
  unconfirmedAiUnits: number;
  /**
   * AI units by the ledger rule. Dry run: what would be sent would cost. Sync, per successful
   * request: the larger of the answer's count and the ledger's expectation for its documents, so
   * documents an earlier attempt created and billed (its answer lost) count here. Predict: as `aiUnits`.
   */
  estimatedAiUnits: number;
  /** HTTP requests made (dry run: requests that would be made). */
  requests: number;
  /** Requests beyond one per packed batch, caused by splitting rejected batches. */
  splitRequests: number;
  dryRun: boolean;
  /** Set when recording to the ledger failed: delivery happened, the next run may resend (free: unchanged). */
  ledgerError?: GatewayError;
}

export function emptyCounts(): SyncCounts {
  return { new: 0, updated: 0, updated_properties_only: 0, updated_text_changed: 0, unchanged: 0 };
}
