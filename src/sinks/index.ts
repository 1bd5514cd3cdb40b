/**
 * The prediction sinks of a configuration: one worker per output (`jsonl`, `webhook`) of
 * every predict route with a `sink`. Used by `mailgate import` and `mailgate serve`.
 */
import type { RouteConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import { createPredictionSink, type PredictionSink, type PredictionSinkOptions } from './worker.js';
import { jsonlOutput, webhookOutput, type SinkOutput } from './outputs.js';

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 30_000;

export interface PredictionSinksOptions extends Pick<PredictionSinkOptions, 'pollMs' | 'batchSize' | 'retry'> {
  store: Store;
  routes: Iterable<RouteConfig>;
  logger?: Logger;
  /** Deadline of one webhook POST in ms (default 30000). */
  webhookTimeoutMs?: number;
}

export interface PredictionSinks {
  readonly workers: ReadonlyArray<PredictionSink & { route: string }>;
  start(signal?: AbortSignal): void;
  /** Wakes the workers of a route (after its predictions were saved). */
  notify(route: string): void;
  /** True once every worker sent everything stored before the call; false when `signal` aborted first. */
  flush(signal?: AbortSignal): Promise<boolean>;
  close(): Promise<void>;
}

/** The outputs a route's `sink` names; none for sync routes. */
export function sinkOutputs(route: RouteConfig, options: Pick<PredictionSinksOptions, 'logger' | 'webhookTimeoutMs'> = {}): SinkOutput[] {
  const sink = route.sink;
  if (route.mode !== 'predict' || sink === undefined) return [];
  const outputs: SinkOutput[] = [];
  if (sink.jsonl !== undefined) outputs.push(jsonlOutput(sink.jsonl));
  if (sink.webhook !== undefined) {
    outputs.push(
      webhookOutput({
        url: sink.webhook,
        route: route.name,
        timeoutMs: options.webhookTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
        ...(sink.webhook_secret === undefined ? {} : { secret: sink.webhook_secret }),
        onSkip: (status, batch) =>
          options.logger?.error(
            {
              code: 'MAILGATE_ERR_SINK_WEBHOOK_REJECTED',
              route: route.name,
              status,
              firstId: batch[0]?.id,
              lastId: batch.at(-1)?.id,
              count: batch.length,
            },
            `prediction webhook answered ${status}: batch skipped (the predictions stay in the store)`,
          ),
      }),
    );
  }
  return outputs;
}

export function createPredictionSinks(options: PredictionSinksOptions): PredictionSinks {
  const workers: Array<PredictionSink & { route: string }> = [];
  for (const route of options.routes) {
    for (const output of sinkOutputs(route, options)) {
      const sink = createPredictionSink({
        store: options.store,
        route: route.name,
        output,
        ...(options.logger ? { logger: options.logger } : {}),
        ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
        ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
        ...(options.retry === undefined ? {} : { retry: options.retry }),
      });
      workers.push(Object.assign(sink, { route: route.name }));
    }
  }
  return {
    workers,
    start: (signal) => workers.forEach((w) => w.start(signal)),
    notify: (route) => workers.forEach((w) => w.route === route && w.notify()),
    async flush(signal) {
      const done = await Promise.all(workers.map((w) => w.flush(signal)));
      return done.every(Boolean);
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
