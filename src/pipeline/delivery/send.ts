/**
 * The DeliverFn of a runtime: maps a route (mailgate.yaml, snake_case) to a batcher target
 * (camelCase) and hands claimed outbox items to `deliverBatch`, keyed by outbox id.
 */
import type { ApiClient } from '../../api/client.js';
import { checkRouteProperties, deliverBatch, type DeliveryItem, type Target } from '../../batcher/index.js';
import type { DocumentHashes, Ledger, LedgerEntry } from '../../ledger/index.js';
import type { RawEmailDocument } from '../../model/index.js';
import type { Config, RouteConfig } from '../../config/schema.js';
import { GatewayError } from '../../errors.js';
import { MAX_PREDICT_DOCUMENTS } from '../../limits.js';
import type { LedgerRecord, OutboxItem } from '../../store/types.js';
import type { DeliverFn } from './loop.js';

/** The batcher target a route delivers to. */
export function targetOf(route: RouteConfig, config: Pick<Config, 'delivery'>): Target {
  const common = {
    transformTag: route.transform_tag,
    onPropertyConflict: route.on_property_conflict,
    maxDocuments:
      route.max_documents ??
      (route.mode === 'predict' ? Math.min(config.delivery.max_documents, MAX_PREDICT_DOCUMENTS) : config.delivery.max_documents),
    maxRequestBytes: config.delivery.max_request_bytes,
  };
  if (route.mode === 'sync') {
    return { kind: 'sync', ...common, source: route.source!, overrideUserProperties: [...route.override_user_properties] };
  }
  return {
    kind: 'predict',
    ...common,
    dataset: route.dataset!,
    version: route.model_version,
    ...(route.threshold === undefined ? {} : { threshold: route.threshold }),
    ...(route.labels === undefined ? {} : { labels: route.labels.map((l) => ({ ...l })) }),
  };
}

/** Route property rules checked once at startup: a conflict is a configuration error. */
export function checkRoutes(routes: Iterable<RouteConfig>): void {
  for (const route of routes) {
    try {
      checkRouteProperties({
        kind: route.mode,
        userProperties: { ...route.user_properties },
        overrideUserProperties: [...route.override_user_properties],
        onPropertyConflict: route.on_property_conflict,
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `route "${route.name}": ${message}`, { cause: err });
    }
  }
}

export interface DeliverFnOptions {
  client: ApiClient;
  /** The billing ledger (the store). */
  ledger: Ledger;
  config: Pick<Config, 'delivery'>;
  /** Pack and estimate only; nothing is sent. */
  dryRun?: boolean;
  signal?: AbortSignal;
}

/**
 * A ledger that reads from `ledger` and holds writes back, so that delivery stores them in
 * the transaction that marks the items delivered (Store.markDelivered) instead of one more
 * commit per request.
 *
 * "Never paying twice" still holds, because an entry is never durable later than the
 * delivered status of its item: both commit together. If the process dies after the API
 * accepted a batch and before that commit, the items are still queued, are claimed again
 * and sent again with the same comment ids and text, which the API answers as `unchanged`
 * (no AI unit) — the same outcome as before, one request more. The reverse order (status
 * without entry) cannot happen. Lookups see committed entries only: within a batch the
 * batcher looks up once before sending, so holding writes back changes nothing there.
 */
function deferredLedger(ledger: Ledger): Ledger & { drain(): LedgerRecord[] } {
  let held: LedgerRecord[] = [];
  return {
    lookup: (source, commentIds) => ledger.lookup(source, commentIds),
    async record(source: string, entries: Array<LedgerEntry & { commentId: string }>) {
      if (entries.length > 0) held.push({ source, entries });
    },
    drain() {
      const out = held;
      held = [];
      return out;
    },
  };
}

/**
 * An outbox item as the batcher takes it: its stored text and hashes, the document parsed only if
 * needed. A class, so that the lazy getter lives on the prototype: an object literal with a getter
 * cost each item a closure and an object of its own shape.
 */
class OutboxDelivery implements DeliveryItem {
  readonly key: string;
  readonly json: string;
  readonly commentId: string;
  declare hashes?: DocumentHashes;

  readonly #outbox: OutboxItem;

  constructor(item: OutboxItem) {
    this.#outbox = item;
    this.key = String(item.id);
    this.json = item.documentJson;
    this.commentId = item.commentId;
    if (item.hashes !== undefined) this.hashes = item.hashes;
  }

  get document(): RawEmailDocument {
    return this.#outbox.document;
  }
}

export function createDeliverFn(options: DeliverFnOptions): DeliverFn {
  const targets = new Map<string, Target>();
  return async (route, items) => {
    let target = targets.get(route.name);
    if (target === undefined) targets.set(route.name, (target = targetOf(route, options.config)));
    // Outbox documents were built by intake (buildDocument, schema-tested), or are dead
    // letters that are never claimed: checking each against the API schema again only costs time.
    const ledger = deferredLedger(options.ledger);
    const report = await deliverBatch(
      items.map((i) => new OutboxDelivery(i)),
      target,
      options.client,
      ledger,
      { dryRun: options.dryRun === true, concurrency: 1, validate: false, ...(options.signal ? { signal: options.signal } : {}) },
    );
    const aiUnits = options.dryRun === true ? report.estimatedAiUnits : report.aiUnits;
    return { outcomes: report.outcomes, aiUnits, aiUnitsEstimated: report.estimatedAiUnits, ledger: ledger.drain() };
  };
}
