/**
 * Accumulates items per route and delivers them in batches: a route flushes when it holds a
 * full request (count or bytes) or when its time window, started by its first waiting item,
 * ends. Each add() resolves with that item's outcome.
 */
import type { ApiClient } from '../api/client.js';
import { GatewayError } from '../errors.js';
import { deliverBatch, type DeliverOptions } from './deliver.js';
import type { Ledger } from './ledger.js';
import { resolveBatchLimits } from './pack.js';
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
  waiting: Waiting[];
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
      this.routes.set(route, { target, limits, waiting: [], bytes: 0, timer: undefined, ready: [], running: 0 });
    }
  }

  add(route: string, item: DeliveryItem): Promise<ItemOutcome> {
    const queue = this.routes.get(route);
    if (queue === undefined) return Promise.reject(new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `unknown route "${route}"`));
    if (this.closed) return Promise.reject(new GatewayError('MAILGATE_ERR_CONFIG_INVALID', 'the batcher is closed'));
    return new Promise<ItemOutcome>((resolve, reject) => {
      queue.waiting.push({ item, resolve, reject });
      queue.bytes += Buffer.byteLength(JSON.stringify(item.document)) + 1;
      if (queue.waiting.length >= queue.limits.maxDocuments || queue.bytes >= queue.limits.maxRequestBytes) this.flushRoute(route, queue);
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
