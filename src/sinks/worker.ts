/**
 * The prediction sink worker: at-least-once from the store to one output (JSONL file or
 * webhook). It reads `listPredictions({ route, after: cursor })`, sends the batch, and only
 * then stores the cursor (checkpoint `sink:<route>:<output>`). Killed at any point, it
 * resends at most the batch in flight; consumers dedupe by `comment_id` (latest `id` wins).
 * Driven by the store, not by memory: a wake-up (`notify`) only shortens the poll.
 */
import { delayFor, resolveRetryPolicy, type RetryPolicy } from '../api/retry.js';
import { isGatewayError } from '../errors.js';
import { parseLimit } from '../limits.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import type { SinkOutput } from './outputs.js';
import { sleep } from '../pipeline/sleep.js';

export const DEFAULT_SINK_POLL_MS = 2_000;
export const DEFAULT_SINK_BATCH = 100;
/** Backoff of a failing output: exponential from 1 s with the retry policy's jitter, capped at 60 s, retried until it works or the sink closes. */
export const SINK_RETRY: Readonly<RetryPolicy> = resolveRetryPolicy({ baseDelayMs: 1_000, maxDelayMs: 60_000 });

export interface PredictionSinkOptions {
  store: Store;
  route: string;
  output: SinkOutput;
  logger?: Logger;
  /** Poll interval when caught up, in ms (default 2000); `notify()` wakes the worker sooner. */
  pollMs?: number;
  /** Predictions per read, line batch and webhook POST (1..10000, default 100). */
  batchSize?: number;
  retry?: Partial<RetryPolicy>;
}

export interface PredictionSink {
  /** Checkpoint key of the cursor: `sink:<route>:<output>`. */
  readonly key: string;
  /** Predictions sent (or skipped by the receiver) since start. */
  readonly sent: number;
  /** Starts the worker; it runs until `signal` aborts or `close()`. */
  start(signal?: AbortSignal): void;
  /** New predictions were saved: read now rather than at the next poll. */
  notify(): void;
  /** Resolves true once every prediction stored before the call was sent; false if `signal` aborted or the sink stopped first. */
  flush(signal?: AbortSignal): Promise<boolean>;
  /** Stops after the batch in flight (an unfinished send is resent by the next start) and closes the output. */
  close(): Promise<void>;
}

export function sinkCheckpointKey(route: string, output: string): string {
  return `sink:${route}:${output}`;
}

export function createPredictionSink(options: PredictionSinkOptions): PredictionSink {
  const { store, route, output } = options;
  const key = sinkCheckpointKey(route, output.name);
  const pollMs = parseLimit('pollMs', options.pollMs, DEFAULT_SINK_POLL_MS);
  const batchSize = parseLimit('batchSize', options.batchSize, DEFAULT_SINK_BATCH, { max: 10_000 });
  const policy = resolveRetryPolicy({ ...SINK_RETRY, ...options.retry });
  const log = options.logger?.child({ component: 'prediction-sink', route, output: output.name });
  const own = new AbortController();
  let stop: AbortSignal = own.signal;
  let running: Promise<void> | undefined;
  let ended = false;
  let sent = 0;
  let wake: AbortController | undefined;
  let woken = false;
  /** Incremented at the start of every read; an empty read with seq > a flush's mark settles that flush. */
  let readSeq = 0;
  const flushes = new Set<{ mark: number; resolve: (ok: boolean) => void }>();

  function notify(): void {
    woken = true;
    wake?.abort();
  }

  async function idle(ms: number): Promise<void> {
    if (woken) return void (woken = false);
    // Stopping: nothing to wait for.
    if (stop.aborted) return;
    wake = new AbortController();
    await sleep(ms, AbortSignal.any([stop, wake.signal]));
    wake = undefined;
    woken = false;
  }

  /**
   * Runs `fn` until it succeeds, with backoff between failures; undefined when the sink
   * stopped first. `once` makes the first attempt even when stopping (storing a cursor).
   */
  async function persist<T>(what: string, fn: () => Promise<T>, once = false): Promise<{ value: T } | undefined> {
    for (let attempt = 1; attempt === 1 && once ? true : !stop.aborted; attempt++) {
      try {
        return { value: await fn() };
      } catch (err) {
        if (stop.aborted) return undefined;
        const retryAfterMs = isGatewayError(err) ? err.details?.['retryAfterMs'] : undefined;
        const delayMs = delayFor(Math.min(attempt, 30), { retryAfterMs }, policy);
        const code = isGatewayError(err) ? err.code : 'MAILGATE_ERR_STORE_UNAVAILABLE';
        log?.warn({ err, code, attempt, delayMs }, `prediction sink: ${what} failed, retrying`);
        await sleep(delayMs, stop);
      }
    }
    return undefined;
  }

  async function readCursor(): Promise<number | undefined> {
    const read = await persist('reading the cursor', () => store.getCheckpoint(key));
    if (read === undefined) return undefined;
    const cursor = read.value?.['cursor'];
    return typeof cursor === 'number' && Number.isSafeInteger(cursor) && cursor >= 0 ? cursor : 0;
  }

  function settleFlushes(ok: (mark: number) => boolean): void {
    for (const f of flushes) {
      if (!ok(f.mark)) continue;
      flushes.delete(f);
      f.resolve(true);
    }
  }

  async function loop(): Promise<void> {
    let cursor = await readCursor();
    while (cursor !== undefined && !stop.aborted) {
      const seq = ++readSeq;
      const after = cursor;
      const read = await persist('reading predictions', () => store.listPredictions({ route, after, limit: batchSize }));
      if (read === undefined) break;
      const batch = read.value;
      if (batch.length === 0) {
        settleFlushes((mark) => seq > mark);
        await idle(pollMs);
        continue;
      }
      if ((await persist(`sending to ${output.name}`, () => output.send(batch, stop))) === undefined) break;
      const last = batch[batch.length - 1]!.id;
      sent += batch.length;
      // Sent: store the cursor even when stopping, so that a clean stop resends nothing.
      if ((await persist('storing the cursor', () => store.setCheckpoint(key, { cursor: last }), true)) === undefined) break;
      cursor = last;
    }
  }

  return {
    key,
    get sent() {
      return sent;
    },
    start(signal) {
      if (running) return;
      stop = signal ? AbortSignal.any([signal, own.signal]) : own.signal;
      running = loop()
        .catch((err: unknown) => void log?.error({ err }, 'prediction sink stopped unexpectedly'))
        .finally(() => {
          ended = true;
          for (const f of flushes) f.resolve(false);
          flushes.clear();
        });
    },
    notify,
    flush(signal) {
      if (!running || ended || stop.aborted) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const entry = {
          mark: readSeq,
          resolve: (ok: boolean) => {
            signal?.removeEventListener('abort', onAbort);
            resolve(ok);
          },
        };
        const onAbort = () => {
          flushes.delete(entry);
          entry.resolve(false);
        };
        if (signal?.aborted) return resolve(false);
        signal?.addEventListener('abort', onAbort, { once: true });
        flushes.add(entry);
        notify();
      });
    },
    async close() {
      own.abort();
      wake?.abort();
      await running;
      await output.close();
    },
  };
}
