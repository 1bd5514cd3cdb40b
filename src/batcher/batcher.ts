/**
 * Accumulates items per route and delivers them in batches: a route flushes when it holds a
 * full request (count), before an item that would make its request too large (bytes), or
 * when its time window, started by its first waiting item, ends. Each add() resolves with
 * that item's outcome.
 *
 * Bytes are counted as packing counts them (envelope + documents + commas), with the
 * envelope at its largest (every generated property name in the override list when the
 * route may override), so a flushed batch always fits one request: packing never has to cut
 * it into a full request and a one-document one.
 */
import type { ApiClient } from '../api/client.js';
import { GatewayError } from '../errors.js';
import { deliverBatch, type DeliverOptions } from './deliver.js';
import type { Ledger } from './ledger.js';
import { GENERATED_PROPERTIES } from '../model/index.js';
import { resolveBatchLimits } from './pack.js';
import { buildPredictRequest, buildSyncRequest } from './requests.js';
import type { DeliveryItem, DeliveryReport, ItemOutcome, Target } from './types.js';

export const DEFAULT_BATCH_WINDOW_MS = 200;
export const DEFAULT_BATCHER_CONCURRENCY = 2;

export interface BatcherOptions {
  client: ApiClient;
  ledger?: Ledger;
  /** How long the first waiting item of a route waits for company, in ms (default 200; 0 flushes on the next tick). */
  windowMs?: number;
  deliver?: DeliverOptions;
  /** Deliveries in flight per route (default 2); full batches beyond it wait their turn. */
  concurrency?: number;
  /** Called with each flush's report (metrics, billing totals). */
  onReport?: (route: string, report: DeliveryReport) => void;
}

interface Waiting {
  item: DeliveryItem;
  resolve: (outcome: ItemOutcome) => void;
  reject: (err: unknown) => void;
}

interface RouteQueue {
  target: Target;
  limits: { maxDocuments: number; maxRequestBytes: number };
  /** Bytes of the route's request with no documents, at its largest. */
  envelope: number;
  waiting: Waiting[];
  /** Bytes of the waiting documents and the commas between them. */
  bytes: number;
  timer: NodeJS.Timeout | undefined;
  /** Closed batches waiting for a delivery slot. */
  ready: Waiting[][];
  running: number;
}

export class Batcher {
  private readonly routes = new Map<string, RouteQueue>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly windowMs: number;
  private readonly concurrency: number;
  private closed = false;

  constructor(targets: Record<string, Target>, private readonly options: BatcherOptions) {
    this.windowMs = options.windowMs ?? DEFAULT_BATCH_WINDOW_MS;
    if (!Number.isFinite(this.windowMs) || this.windowMs < 0) {
      throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `batch windowMs must be a number >= 0 (got ${String(options.windowMs)})`);
    }
    this.concurrency = options.concurrency ?? DEFAULT_BATCHER_CONCURRENCY;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) {
      throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `batcher concurrency must be an integer >= 1 (got ${String(options.concurrency)})`);
    }
    for (const [route, target] of Object.entries(targets)) {
      const limits = resolveBatchLimits(target.kind, target);
      this.routes.set(route, { target, limits, envelope: largestEnvelope(target), waiting: [], bytes: 0, timer: undefined, ready: [], running: 0 });
    }
  }

  add(route: string, item: DeliveryItem): Promise<ItemOutcome> {
    const queue = this.routes.get(route);
    if (queue === undefined) return Promise.reject(new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `unknown route "${route}"`));
    if (this.closed) return Promise.reject(new GatewayError('MAILGATE_ERR_CONFIG_INVALID', 'the batcher is closed'));
    return new Promise<ItemOutcome>((resolve, reject) => {
      const size = Buffer.byteLength(item.json ?? JSON.stringify(item.document));
      // Flush first when this document would not fit beside the waiting ones (+1: the comma).
      if (queue.waiting.length > 0 && queue.envelope + queue.bytes + 1 + size > queue.limits.maxRequestBytes) this.flushRoute(route, queue);
      queue.bytes += size + (queue.waiting.length > 0 ? 1 : 0);
      queue.waiting.push({ item, resolve, reject });
      const full = queue.envelope + queue.bytes >= queue.limits.maxRequestBytes; // nothing more can fit
      if (queue.waiting.length >= queue.limits.maxDocuments || full) this.flushRoute(route, queue);
      else queue.timer ??= setTimeout(() => this.flushRoute(route, queue), this.windowMs);
    });
  }

  /** Delivers everything waiting now and resolves when every delivery is settled. */
  async flush(): Promise<void> {
    for (const [route, queue] of this.routes) this.flushRoute(route, queue);
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Refuses new items, delivers what is waiting, and waits for every delivery. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private flushRoute(route: string, queue: RouteQueue): void {
    if (queue.timer !== undefined) clearTimeout(queue.timer);
    queue.timer = undefined;
    if (queue.waiting.length === 0) return;
    queue.ready.push(queue.waiting);
    queue.waiting = [];
    queue.bytes = 0;
    this.startReady(route, queue);
  }

  private startReady(route: string, queue: RouteQueue): void {
    while (queue.running < this.concurrency && queue.ready.length > 0) {
      const batch = queue.ready.shift()!;
      queue.running += 1;
      const run = this.deliver(route, queue.target, batch).finally(() => {
        queue.running -= 1;
        this.inFlight.delete(run);
        this.startReady(route, queue);
      });
      this.inFlight.add(run);
    }
  }

  private async deliver(route: string, target: Target, batch: Waiting[]): Promise<void> {
    try {
      const report = await deliverBatch(batch.map((w) => w.item), target, this.options.client, this.options.ledger, this.options.deliver);
      report.outcomes.forEach((outcome, i) => batch[i]!.resolve(outcome));
      this.options.onReport?.(route, report);
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}

/** The route's request with no documents, with the longest override list it can carry. */
function largestEnvelope(target: Target): number {
  if (target.kind === 'predict') return Buffer.byteLength(JSON.stringify(buildPredictRequest(target, [])));
  const names = new Set(target.overrideUserProperties ?? []);
  if (target.onPropertyConflict === 'override') for (const name of Object.keys(GENERATED_PROPERTIES)) names.add(name);
  return Buffer.byteLength(JSON.stringify(buildSyncRequest(target, [], [...names])));
}
