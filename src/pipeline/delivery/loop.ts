/**
 * Delivery: claim ready outbox items per route, hand them to the batcher, and record one
 * outcome per item — delivered, unchanged, retry later, or dead letter. Never holds more
 * than `claimLimit × concurrency` documents in memory.
 */
import type { ItemOutcome } from '../../batcher/types.js';
import type { RouteConfig } from '../../config/schema.js';
import { atLeast, backoffDelay, type Backoff } from '../../retry.js';
import type { DeliveryInfo, LedgerRecord, OutboxItem, PredictionInput, Store } from '../../store/types.js';
import type { RuntimeEvents } from '../events.js';
import { fanOut } from '../fan-out.js';
import { routeTarget } from '../origin.js';
import { sleep } from '../sleep.js';

/** The longest wait before a route's worker asks a refusing store for work again. */
const CLAIM_BACKOFF_MAX_MS = 30_000;

/** One item's result from the batcher (src/batcher/deliver-batch.ts). */
export type { ItemOutcome };

export interface BatchResult {
  outcomes: ItemOutcome[];
  /** AI units the API confirmed for this batch (stored in the route's counter). */
  aiUnits: number;
  /** AI units by the ledger rule, counting what an earlier attempt may have been billed for (default `aiUnits`). */
  aiUnitsEstimated?: number;
  model?: { version: number; time: string } | null;
  /** Ledger entries the batcher held back; written with the delivered items (see createDeliverFn). */
  ledger?: LedgerRecord[];
}

/** Sends the items of one route; the key of each item is its outbox id as a string. */
export type DeliverFn = (route: RouteConfig, items: OutboxItem[]) => Promise<BatchResult>;

export interface DeliveryCounters {
  delivered: number;
  unchanged: number;
  rejected: number;
  retried: number;
  /** AI units the API confirmed to this process. */
  aiUnits: number;
  /** AI units by the ledger rule (docs/delivery.md "AI units reported"): an estimate, at least `aiUnits`. */
  aiUnitsEstimated: number;
}

export interface DeliveryOptions {
  store: Store;
  routes: readonly RouteConfig[];
  deliver: DeliverFn;
  /** Identifies this process in claims. */
  owner: string;
  /** How long a claim is ours before another worker may take the items, in ms. */
  leaseMs: number;
  /** Items claimed per batch. */
  claimLimit: number;
  /** Batches in flight per route. */
  concurrency: number;
  /** A failing item is dead-lettered after this many attempts. */
  maxItemAttempts: number;
  /** Backoff for an item whose request failed after the client's own retries, by attempt number. */
  retryDelayMs?: (attempts: number, retryAfterMs?: number) => number;
  /** Poll interval when the outbox is empty, in ms. */
  idleMs?: number;
  /**
   * After a partial batch (fewer than `claimLimit` items), how long the route worker waits
   * before it claims again, in ms: documents arriving meanwhile share one request instead of
   * each few making their own. Default 0 (claim again at once).
   */
  flushMs?: number;
  /** After the API accepted items (after-delivery actions, prediction sinks). Errors are reported, not thrown. */
  onDelivered?: (
    route: RouteConfig,
    items: OutboxItem[],
    outcomes: Map<number, ItemOutcome>,
    model?: BatchResult['model'],
  ) => Promise<void>;
  onError?: (err: unknown, route: RouteConfig) => void;
  /**
   * How long a route pauses when the API refuses the credentials, the target (401, 403, 404)
   * or the request itself (an unknown transform tag): retrying at once cannot help. Default 60000 ms.
   */
  pauseMs?: number;
  /** Where each item's outcome, each settled batch and each pause and resume go. */
  events?: RuntimeEvents;
  /**
   * Pauses kept beyond this process (the store's `route_pauses`): those of an earlier run are
   * forgotten when `run` starts, and a paused route checks every `pauseCheckMs` whether its
   * pause was lifted by hand (`mailgate routes resume`).
   */
  pauses?: {
    stored(): Promise<Array<{ route: string }>>;
    forget(route: string): Promise<unknown>;
    lifted(route: string): Promise<boolean>;
  };
  /** How often a paused route checks whether its pause was lifted by hand, in ms. Default 5000. */
  pauseCheckMs?: number;
}

/** Outcomes that no retry of the same request can fix soon: the route pauses. */
export const PAUSE_CODES: ReadonlySet<string> = new Set([
  'MAILGATE_ERR_API_UNAUTHORIZED',
  'MAILGATE_ERR_API_FORBIDDEN',
  'MAILGATE_ERR_API_NOT_FOUND',
  // A quota of the project is reached (the modelled 402, see the emulator's `quota` fault).
  'MAILGATE_ERR_API_QUOTA',
  // The API refused the request itself (a transform tag it does not know): a configuration fix.
  'MAILGATE_ERR_API_REQUEST_REJECTED',
]);
export const DEFAULT_PAUSE_MS = 60_000;

/**
 * What delivery does with one item's outcome — the dead-letter rule, stated once: a rejected
 * document is dead at once; a refusal of the route (PAUSE_CODES) pauses it and keeps the item;
 * any other failure retries until the item's `max_item_attempts`-th attempt, then gives up.
 * `attempts`: the retries scheduled before this attempt.
 */
export type Verdict = 'delivered' | 'unchanged' | 'rejected' | 'pause' | 'gave-up' | 'retry';

export function verdictOf(outcome: ItemOutcome, attempts: number, maxItemAttempts: number): Verdict {
  if (outcome.status === 'delivered' || outcome.status === 'unchanged' || outcome.status === 'rejected') return outcome.status;
  if (PAUSE_CODES.has(outcome.code)) return 'pause';
  return attempts + 1 >= maxItemAttempts ? 'gave-up' : 'retry';
}

/** Delivery's item backoff: 1 s doubling per attempt up to 5 min, equal jitter. */
export const ITEM_BACKOFF: Readonly<Backoff> = Object.freeze({ baseMs: 1_000, capMs: 300_000, maxExponent: 20, jitter: 'equal' });

/** Whole milliseconds (the store takes no fractions): half to all of 1 s doubling per attempt up to 5 min, at least Retry-After. */
export function defaultRetryDelay(attempts: number, retryAfterMs?: number, random: () => number = Math.random): number {
  return Math.ceil(atLeast(backoffDelay(attempts, ITEM_BACKOFF, random), retryAfterMs));
}

export interface DeliveryLoop {
  readonly counters: DeliveryCounters;
  /** Claims and delivers one batch of a route; returns the number of items claimed. */
  runOnce(route: RouteConfig): Promise<number>;
  /**
   * Delivers until the signal aborts, or until `until()` is true after an empty claim round: then
   * every worker of the run ends, without claiming again.
   */
  run(signal: AbortSignal, until?: () => Promise<boolean>): Promise<void>;
  /**
   * Calls `listener(route)` after predictions of a predict route were saved (a prediction
   * sink's wake-up). Returns the unsubscribe function. A listener's exception is ignored.
   */
  onPredictionsSaved(listener: (route: string) => void): () => void;
  /** New items were queued: idle route workers claim now instead of at the end of their idle wait. */
  wake(): void;
  /**
   * Nothing more will be queued in this run (`mailgate import` once its input is read): a partial
   * batch goes out without the `flushMs` wait, and idle workers look again now, so that `run`
   * ends as soon as `until()` holds.
   */
  drain(): void;
  /**
   * A batch on its own was stored (the runtime: a pull call of 100 items or more, an IMAP
   * backfill chunk, a batch of a file): it goes out without the `flushMs` wait, since lingering
   * for more only delays it (the last chunk of a backfill waited up to `flushMs` for mail that
   * was not coming). Ends the flush waits under way, and a worker whose claim was running skips
   * its next one; idle workers look again too.
   */
  flush(): void;
  /** Lifts the route's pause now (`mailgate routes resume`, the admin API); false when it was not paused. */
  resume(route: string): boolean;
}

/** The predictions of a predict route's accepted items, as the store saves them. */
export function predictionsOf(items: OutboxItem[], outcomes: Map<number, ItemOutcome>, model: BatchResult['model']): PredictionInput[] {
  const saved: PredictionInput[] = [];
  for (const item of items) {
    const o = outcomes.get(item.id);
    if (o?.status !== 'delivered' || o.predictions === undefined) continue;
    saved.push({ commentId: item.commentId, key: item.key, predictions: o.predictions, model: o.model ?? model ?? null });
  }
  return saved;
}

/** One claimed batch being settled, and what it came to. */
interface Batch {
  route: RouteConfig;
  counts: DeliveryCounters;
}

const newBatch = (route: RouteConfig): Batch => ({
  route,
  counts: { delivered: 0, unchanged: 0, rejected: 0, retried: 0, aiUnits: 0, aiUnitsEstimated: 0 },
});

export function createDelivery(options: DeliveryOptions): DeliveryLoop {
  const { store, events } = options;
  const retryDelay = options.retryDelayMs ?? defaultRetryDelay;
  const counters: DeliveryCounters = { delivered: 0, unchanged: 0, rejected: 0, retried: 0, aiUnits: 0, aiUnitsEstimated: 0 };
  const pauseMs = options.pauseMs ?? DEFAULT_PAUSE_MS;
  /** Per route: the instant (ms since epoch) before which its workers do not claim. */
  const pausedUntil = new Map<string, number>();
  const predictionListeners = new Set<(route: string) => void>();

  /**
   * Saved before the items are marked delivered: a crash between the two can only cause a
   * re-prediction (a newer row for the same comment), never a lost prediction.
   */
  async function savePredictions(
    route: RouteConfig,
    items: OutboxItem[],
    outcomes: Map<number, ItemOutcome>,
    model: BatchResult['model'],
  ): Promise<void> {
    if (route.mode !== 'predict') return;
    const accepted = predictionsOf(items, outcomes, model);
    if (accepted.length === 0) return;
    await store.savePredictions(route.name, accepted);
    for (const listener of predictionListeners) {
      try {
        listener(route.name);
      } catch {
        // A wake-up is a hint; the sink polls anyway.
      }
    }
  }

  /** Per paused route: when its pause began (kept while the pause is extended). */
  const pausedSince = new Map<string, Date>();

  function pause(route: RouteConfig, reason: { code: string; message: string }): void {
    const now = Date.now();
    const until = now + pauseMs;
    if ((pausedUntil.get(route.name) ?? 0) >= until - 1_000) return;
    pausedUntil.set(route.name, until);
    let since = pausedSince.get(route.name);
    if (since === undefined) pausedSince.set(route.name, (since = new Date(now)));
    const { code, message } = reason;
    events?.emit('route:paused', { route: route.name, target: routeTarget(route), code, message, since, until: new Date(until), pauseMs });
  }

  /** The route's pause ran out (its workers claim again): reported once per pause. */
  function resumed(route: RouteConfig): void {
    const since = pausedSince.get(route.name);
    if (since === undefined) return;
    pausedSince.delete(route.name);
    events?.emit('route:resumed', { route: route.name, target: routeTarget(route), since, pausedMs: Date.now() - since.getTime() });
  }

  /** Schedules the item's next attempt after `delayMs` and reports it. */
  async function retry(batch: Batch, item: OutboxItem, delayMs: number, reason: { code: string; message: string }): Promise<void> {
    const { route } = batch;
    await store.scheduleRetry(item.id, delayMs, reason);
    batch.counts.retried++;
    const ref = { id: item.id, route: route.name, adapter: item.origin.adapter };
    events?.emit('item:retrying', { ...ref, code: reason.code, message: reason.message, attempts: item.attempts + 1, delayMs });
  }

  async function dead(batch: Batch, item: OutboxItem, error: { code: string; message: string }, reason: 'rejected' | 'attempts') {
    const moved = await store.deadLetter(item.id, error);
    batch.counts.rejected++;
    const { route } = batch;
    if (moved) events?.emit('item:dead', { id: item.id, route: route.name, adapter: item.origin.adapter, ...error, reason });
  }

  /** Each item's outcome by verdictOf: dead letters and retries written one by one, the accepted returned. */
  async function judge(batch: Batch, items: OutboxItem[], outcomes: Map<number, ItemOutcome>) {
    const delivered: OutboxItem[] = [];
    const unchanged: OutboxItem[] = [];
    for (const item of items) {
      const o = outcomes.get(item.id);
      if (!o) {
        await retry(batch, item, retryDelay(item.attempts), {
          code: 'MAILGATE_ERR_BATCH_REJECTED',
          message: 'no outcome returned for this item',
        });
        continue;
      }
      const verdict = verdictOf(o, item.attempts, options.maxItemAttempts);
      if (verdict === 'delivered') delivered.push(item);
      else if (verdict === 'unchanged') unchanged.push(item);
      else {
        const { code, message } = o as Extract<ItemOutcome, { code: string }>;
        if (verdict === 'rejected') await dead(batch, item, { code, message }, 'rejected');
        else if (verdict === 'gave-up')
          await dead(batch, item, { code, message: `gave up after ${item.attempts + 1} attempts: ${message}` }, 'attempts');
        else if (verdict === 'pause') {
          // Due again at once: the route's pause keeps this process from claiming it meanwhile,
          // and the next run of a one-shot import (which stops on a refusal) claims it at once.
          await retry(batch, item, 0, { code, message });
          pause(batch.route, { code, message });
        } else {
          const retryAfterMs = o.status === 'retry' ? o.retryAfterMs : undefined;
          await retry(batch, item, retryDelay(item.attempts, retryAfterMs), { code, message });
        }
      }
    }
    return { delivered, unchanged };
  }

  async function settle(route: RouteConfig, items: OutboxItem[], result: BatchResult): Promise<void> {
    const batch = newBatch(route);
    const outcomes = new Map<number, ItemOutcome>();
    for (const o of result.outcomes) outcomes.set(Number(o.key), o);
    const { delivered, unchanged } = await judge(batch, items, outcomes);
    await savePredictions(route, items, outcomes, result.model);
    // One transaction for the delivered items, the AI units and the ledger entries (a no-op when all are empty).
    const extras: Omit<DeliveryInfo, 'outcome'> = {};
    if (result.aiUnits > 0) extras.aiUnits = { route: route.name, units: result.aiUnits };
    if (result.ledger !== undefined && result.ledger.length > 0) extras.ledger = result.ledger;
    await store.markDelivered(
      delivered.map((i) => i.id),
      { outcome: 'delivered', ...extras },
    );
    if (unchanged.length)
      await store.markDelivered(
        unchanged.map((i) => i.id),
        { outcome: 'unchanged' },
      );
    batch.counts.delivered = delivered.length;
    batch.counts.unchanged = unchanged.length;
    batch.counts.aiUnits = result.aiUnits;
    batch.counts.aiUnitsEstimated = result.aiUnitsEstimated ?? result.aiUnits;
    // Built only for a listener: an item's origin is parsed when first read (mailgate import has none).
    if (events?.has('item:delivered')) {
      for (const i of delivered) events.emit('item:delivered', { id: i.id, route: route.name, adapter: i.origin.adapter });
    }
    if (events?.has('item:unchanged')) {
      for (const i of unchanged) events.emit('item:unchanged', { id: i.id, route: route.name, adapter: i.origin.adapter });
    }
    const done = new Set([...delivered, ...unchanged]);
    const accepted = items.filter((i) => done.has(i));
    if (accepted.length && options.onDelivered) {
      try {
        await options.onDelivered(route, accepted, outcomes, result.model);
      } catch (err) {
        options.onError?.(err, route);
      }
    }
    settled(batch);
  }

  /** The batch's counts added to the loop's, and one `delivery:batch` with them. */
  function settled({ route, counts }: Batch): void {
    for (const k of Object.keys(counts) as Array<keyof DeliveryCounters>) counters[k] += counts[k];
    events?.emit('delivery:batch', { route: route.name, target: routeTarget(route), ...counts });
  }

  /**
   * Keeps the claim on `items` while they are being delivered: one request may take minutes
   * (a slow API, retries with backoff), longer than the lease; without renewal another worker
   * would claim and send them again. A failed renewal is reported; the lease then runs out.
   */
  function holdClaims(route: RouteConfig, items: OutboxItem[]): () => void {
    const ids = items.map((i) => i.id);
    const timer = setInterval(
      () => {
        store.renewClaims(ids, options.owner, options.leaseMs).catch((err: unknown) => options.onError?.(err, route));
      },
      Math.max(1, Math.floor(options.leaseMs / 3)),
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  async function runOnce(route: RouteConfig): Promise<number> {
    const items = await store.claim(route.name, options.claimLimit, options.owner, options.leaseMs);
    if (items.length === 0) return 0;
    const release = holdClaims(route, items);
    try {
      let result: BatchResult;
      try {
        result = await options.deliver(route, items);
      } catch (err) {
        // The batcher turns API failures into outcomes; anything thrown here is unexpected.
        options.onError?.(err, route);
        const reason = { code: 'MAILGATE_ERR_BATCH_REJECTED', message: `delivery failed: ${(err as Error).message}` };
        const batch = newBatch(route);
        for (const item of items) await retry(batch, item, retryDelay(item.attempts), reason);
        settled(batch);
        return items.length;
      }
      await settle(route, items, result);
      return items.length;
    } finally {
      release();
    }
  }

  /** Idle waits (ended by wake(), flush() and drain()) and flush waits (ended by flush() and drain()). */
  const sleepers = new Set<() => void>();
  const flushing = new Set<() => void>();
  /** Set by drain(): no flush waits any more. */
  let draining = false;
  /** Calls of flush() so far: a worker skips its flush wait when one came since its claim began. */
  let flushes = 0;
  /** Waits `ms`, or less when the signal aborts or the wait is ended through `waits`. */
  const idle = (ms: number, signal: AbortSignal, waits = sleepers) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        waits.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      waits.add(done);
    });

  /** Ends every idle wait: the workers claim again. */
  const wakeAll = (): void => {
    for (const done of [...sleepers]) done();
  };

  /** Ends every flush wait and idle wait: partial batches go out, idle workers claim again. */
  const endWaits = (): void => {
    for (const done of [...flushing]) done();
    wakeAll();
  };

  const pauseCheckMs = options.pauseCheckMs ?? 5_000;

  /** Lifts the route's pause at once; the wait of its workers ends. */
  function lift(name: string): boolean {
    if ((pausedUntil.get(name) ?? 0) <= Date.now()) return false;
    pausedUntil.set(name, 0);
    return true;
  }

  /**
   * A new run tries its routes at once (the operator may have fixed the token or the target
   * before starting it): pauses an earlier run recorded are forgotten; a refusal that persists
   * pauses the route again at its first request.
   */
  async function forgetStalePauses(): Promise<void> {
    const stored = await options.pauses?.stored().catch(() => []);
    for (const p of stored ?? []) {
      if (options.routes.some((r) => r.name === p.route)) await options.pauses?.forget(p.route).catch(() => undefined);
    }
  }

  async function routeWorker(
    route: RouteConfig,
    signal: AbortSignal,
    until: (() => Promise<boolean>) | undefined,
    run: { ended: boolean },
  ): Promise<void> {
    const idleMs = options.idleMs ?? 250;
    const flushMs = options.flushMs ?? 0;
    let failures = 0;
    while (!signal.aborted && !run.ended) {
      const wait = (pausedUntil.get(route.name) ?? 0) - Date.now();
      if (wait > 0) {
        await sleep(options.pauses === undefined ? wait : Math.min(wait, pauseCheckMs), signal);
        if (options.pauses !== undefined && (await options.pauses.lifted(route.name).catch(() => false))) lift(route.name);
        continue;
      }
      resumed(route);
      let claimed: number;
      const flushesBefore = flushes;
      try {
        claimed = await runOnce(route);
        failures = 0;
      } catch (err) {
        options.onError?.(err, route);
        // A store that refuses (locked, full, unreachable) is asked again later and later, up to
        // CLAIM_BACKOFF_MAX_MS: on SQLite every refused claim has waited the busy timeout on the
        // event loop's thread, which intake and the health endpoints need meanwhile.
        failures++;
        await sleep(Math.min(idleMs * 2 ** failures, CLAIM_BACKOFF_MAX_MS), signal);
        continue;
      }
      if (claimed > 0) {
        const skip = draining || flushes !== flushesBefore;
        if (claimed < options.claimLimit && flushMs > 0 && !skip) await idle(flushMs, signal, flushing);
        continue;
      }
      if (run.ended || (until && (await until()))) {
        // The run's other workers may be in their idle wait: they wake now, and end too.
        run.ended = true;
        wakeAll();
        return;
      }
      await idle(idleMs, signal);
    }
  }

  return {
    counters,
    runOnce,
    onPredictionsSaved(listener) {
      predictionListeners.add(listener);
      return () => void predictionListeners.delete(listener);
    },
    wake: wakeAll,
    drain() {
      draining = true;
      endWaits();
    },
    flush() {
      flushes++;
      endWaits();
    },
    resume: lift,
    async run(signal, until) {
      await forgetStalePauses();
      const slots = options.routes.flatMap((route) => Array.from({ length: options.concurrency }, () => route));
      // Workers wait on their own signals: one listener on `signal` however many routes run.
      const fanned = fanOut(signal, slots.length);
      try {
        const ended = { ended: false };
        await Promise.all(slots.map((route, i) => routeWorker(route, fanned.signals[i]!, until, ended)));
      } finally {
        fanned.dispose();
      }
    },
  };
}
