/**
 * After-delivery actions (IMAP `seen`, `flag:`, `move:`) run off the delivery path: delivery
 * hands over the origins of items the API accepted and goes on; a single worker applies
 * them in order and retries with backoff while the mailbox is unreachable. Nothing is ever
 * applied to a message the API has not accepted. Origins still pending at shutdown are left
 * alone (the mail stays where it is, flagged as before) and logged.
 */
import type { Logger } from '../logger.js';
import type { Origin } from '../pipeline/types.js';

export interface ActionTarget {
  afterDelivery(origins: Origin[]): Promise<{ applied: Origin[]; skipped: Origin[] }>;
}

export interface AfterDeliveryQueueOptions {
  /** First retry delay in ms after a failed attempt; doubles up to `maxDelayMs`. Default 2000. */
  baseDelayMs?: number;
  /** Default 60000. */
  maxDelayMs?: number;
  /** Origins handed to one afterDelivery() call. Default 500. */
  chunk?: number;
}

export interface AfterDeliveryQueue {
  push(origins: Origin[]): void;
  /** Origins waiting for their action. */
  readonly pending: number;
  readonly applied: number;
  /** Resolves once the queue is empty, or when `signal` aborts; stops the worker. */
  close(signal?: AbortSignal): Promise<void>;
}

export function createAfterDeliveryQueue(target: ActionTarget, logger: Logger, options: AfterDeliveryQueueOptions = {}): AfterDeliveryQueue {
  const baseDelay = options.baseDelayMs ?? 2_000;
  const maxDelay = options.maxDelayMs ?? 60_000;
  const chunk = options.chunk ?? 500;
  const queue: Origin[] = [];
  let applied = 0;
  let running: Promise<void> | undefined;
  let closing = false;
  let wake: (() => void) | undefined;
  const stop = new AbortController();

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stop.signal.aborted) return resolve();
      const done = () => {
        clearTimeout(t);
        stop.signal.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, ms);
      wake = done;
      stop.signal.addEventListener('abort', done, { once: true });
    });

  async function drain(): Promise<void> {
    let failures = 0;
    while (queue.length > 0 && !stop.signal.aborted) {
      const batch = queue.slice(0, chunk);
      try {
        const res = await target.afterDelivery(batch);
        queue.splice(0, batch.length);
        applied += res.applied.length;
        failures = 0;
        if (res.skipped.length) logger.warn({ skipped: res.skipped.length }, 'after-delivery action skipped (message no longer at its UID)');
      } catch (err) {
        failures += 1;
        const delay = Math.min(maxDelay, baseDelay * 2 ** Math.min(failures - 1, 16));
        const jittered = delay / 2 + Math.random() * (delay / 2);
        logger.warn({ err, pending: queue.length, retryInMs: Math.round(jittered) }, 'after-delivery action failed; will retry');
        await pause(jittered);
      }
    }
  }

  function kick(): void {
    if (running || closing) return;
    running = drain().finally(() => {
      running = undefined;
      if (queue.length > 0 && !stop.signal.aborted && !closing) kick();
    });
  }

  return {
    push(origins) {
      if (origins.length === 0) return;
      queue.push(...origins);
      if (closing) return;
      wake?.();
      kick();
    },
    get pending() {
      return queue.length;
    },
    get applied() {
      return applied;
    },
    async close(signal) {
      if (queue.length > 0 && !running && !stop.signal.aborted) kick();
      closing = true;
      const onAbort = () => stop.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) stop.abort();
      await running;
      signal?.removeEventListener('abort', onAbort);
      stop.abort();
      if (queue.length > 0) logger.warn({ pending: queue.length }, 'after-delivery actions not applied before shutdown; those messages stay in place');
    },
  };
}
