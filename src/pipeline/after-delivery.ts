/**
 * After-delivery actions (IMAP `seen`, `flag:`, `move:`) run off the delivery path, driven by
 * the store: an item enqueued with `afterDelivery` becomes due in the same transaction that
 * marks it delivered, so a crash between the API's answer and the action loses nothing. One
 * worker reads due items in id order, applies their actions, and marks them finished; the
 * actions of an unreachable mailbox (returned as deferred) stay due and are retried with
 * backoff, while those of the other mailboxes are finished. Nothing is ever applied to a message
 * the API has not accepted. Actions still due at shutdown stay in the store for the next start.
 * An action may be applied twice after a crash (between the IMAP command and `finishActions`):
 * each one is idempotent (a flag set again; a move of a UID no longer in the folder is a no-op).
 */
import type { Logger } from '../logger.js';
import { sleep } from './sleep.js';
import type { Origin } from './types.js';
import { backoffDelay, type Backoff } from '../retry.js';
import type { PendingAction, Store } from '../store/types.js';

export interface ActionTarget {
  /**
   * Applies the actions of these origins. `deferred` (optional) lists the origins that could not
   * be applied now (e.g. their mailbox is unreachable): they stay due; the others are finished.
   */
  afterDelivery(origins: Origin[]): Promise<{ applied: Origin[]; skipped: Origin[]; deferred?: Origin[] }>;
}

export type ActionStore = Pick<Store, 'pendingActions' | 'finishActions'>;

export interface AfterDeliveryQueueOptions {
  /** First retry delay in ms after a failed attempt; doubles up to `maxDelayMs`. Default 2000. */
  baseDelayMs?: number;
  /** Default 60000. */
  maxDelayMs?: number;
  /** Items handed to one afterDelivery() call. Default 500. */
  chunk?: number;
  /** How often the store is read again without a wake-up (items delivered by another replica). Default 5000. */
  pollMs?: number;
  /**
   * A page of actions the target has not answered for this long is logged (a warning, once per
   * page): actions waiting on a mailbox that neither applies nor refuses them are not silent.
   * Default SLOW_ANSWER_MS.
   */
  slowAnswerMs?: number;
}

/** Default of `slowAnswerMs`: longer than an action's own wait for a connection (60 s). */
export const SLOW_ANSWER_MS = 90_000;

export interface AfterDeliveryQueue {
  /** Delivery accepted items: look for due actions now rather than at the next poll. */
  wake(): void;
  /** Due actions seen at the last read of the store that are not finished yet. */
  readonly pending: number;
  readonly applied: number;
  /** Applies what is due, then resolves; or resolves when `signal` aborts, leaving the rest due. Stops the worker. */
  close(signal?: AbortSignal): Promise<void>;
}

export function createAfterDeliveryQueue(
  target: ActionTarget,
  store: ActionStore,
  logger: Logger,
  options: AfterDeliveryQueueOptions = {},
): AfterDeliveryQueue {
  const baseDelay = options.baseDelayMs ?? 2_000;
  const maxDelay = options.maxDelayMs ?? 60_000;
  const chunk = options.chunk ?? 500;
  const pollMs = options.pollMs ?? 5_000;
  const slowAnswerMs = options.slowAnswerMs ?? SLOW_ANSWER_MS;
  let applied = 0;
  let pending = 0;
  let closing = false;
  let woken = false;
  /** Ends the current pause early (a wake-up, or close). */
  let wakeUp: AbortController | undefined;
  const stop = new AbortController();

  async function pause(ms: number): Promise<void> {
    if (stop.signal.aborted || woken) return;
    wakeUp = new AbortController();
    await sleep(ms, AbortSignal.any([stop.signal, wakeUp.signal]));
    wakeUp = undefined;
  }

  /** Applies one page of due items; finishes all but the deferred ones. */
  async function page(due: PendingAction[]): Promise<number> {
    const asked = Date.now();
    const slow = setTimeout(
      () =>
        logger.warn(
          { count: due.length, waitedMs: Date.now() - asked },
          `after-delivery: no answer for ${slowAnswerMs >= 1_000 ? `${Math.round(slowAnswerMs / 1_000)} s` : `${slowAnswerMs} ms`} about ${due.length} action(s); they stay due until the mailbox applies or refuses them`,
        ),
      slowAnswerMs,
    );
    slow.unref();
    let res: Awaited<ReturnType<ActionTarget['afterDelivery']>>;
    try {
      res = await target.afterDelivery(due.map((d) => d.origin));
    } finally {
      clearTimeout(slow);
    }
    const held = new Set(res.deferred ?? []);
    await store.finishActions(due.filter((d) => !held.has(d.origin)).map((d) => d.id));
    applied += res.applied.length;
    if (res.skipped.length)
      logger.warn({ skipped: res.skipped.length }, 'after-delivery action skipped (message no longer at its UID, or its account is gone)');
    return held.size;
  }

  /**
   * One pass over everything due, page by page in id order: items of an unreachable mailbox
   * stay due without holding up those of the others. Returns the counts finished and deferred.
   */
  async function pass(): Promise<{ finished: number; deferred: number }> {
    woken = false;
    let after = 0;
    let finished = 0;
    let deferred = 0;
    for (;;) {
      const due = await store.pendingActions(chunk, after);
      if (due.length === 0) break;
      pending = deferred + due.length;
      after = due[due.length - 1]!.id;
      const held = await page(due);
      deferred += held;
      finished += due.length - held;
    }
    pending = deferred;
    return { finished, deferred };
  }

  const backoff: Backoff = { baseMs: baseDelay, capMs: maxDelay, maxExponent: 16, jitter: 'equal' };
  const delayFor = (failures: number): number => backoffDelay(failures - 1, backoff);

  async function work(): Promise<void> {
    let failures = 0;
    while (!stop.signal.aborted) {
      let res: { finished: number; deferred: number };
      // A pass a wake-up asked for (delivery accepted more; a mailbox is reachable again) does not
      // grow the backoff: during an outage every delivered batch wakes the queue, and counting
      // those passes would leave the actions waiting the full cap after the mailbox came back.
      const byWake = woken;
      try {
        res = await pass();
      } catch (err) {
        failures += 1;
        const retryInMs = Math.round(delayFor(failures));
        logger.warn({ err, pending, retryInMs }, 'after-delivery action failed; will retry');
        await pause(retryInMs);
        continue;
      }
      if (res.deferred > 0) {
        // The target logged why; retried with backoff (a wake-up retries sooner).
        failures = byWake ? Math.max(failures, 1) : failures + 1;
        await pause(delayFor(failures));
        continue;
      }
      failures = 0;
      if (res.finished > 0) continue;
      if (closing) return;
      await pause(pollMs);
    }
  }

  const running = work();

  return {
    wake() {
      woken = true;
      wakeUp?.abort();
    },
    get pending() {
      return pending;
    },
    get applied() {
      return applied;
    },
    async close(signal) {
      closing = true;
      const onAbort = () => stop.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) stop.abort();
      wakeUp?.abort();
      await running;
      signal?.removeEventListener('abort', onAbort);
      stop.abort();
      if (pending > 0) logger.warn({ pending }, 'after-delivery actions still due at shutdown; they run at the next start');
    },
  };
}
