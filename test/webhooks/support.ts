/** Helpers of the webhook tests: requests from simulations, an in-memory intake that records, a capturing logger. */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { createWebhookAdapter } from '../../adapters/webhooks/index.js';
import type { WebhookEntryInput } from '../../adapters/webhooks/config.js';
import type { SimulatedRequest, VerifyContext } from '../../adapters/webhooks/provider.js';
import { ReplayCache } from '../../adapters/webhooks/replay.js';
import { GatewayError, type ErrorCode } from '../../src/errors.js';
import { createLogger, type Logger } from '../../src/logger.js';
import type { Accepted, Inbound, Intake, PushRequest, PushResponse } from '../../src/pipeline/types.js';
import { startOn } from '../support/push-start.js';

export const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);

export const sample = (name: string): Buffer => readFileSync(new URL(`../../samples/mime/${name}`, import.meta.url));

export function toRequest(
  sim: SimulatedRequest | { method: string; headers: Record<string, string>; body: Buffer },
  url = '/webhooks/x',
): PushRequest {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(sim.headers)) headers[k.toLowerCase()] = v;
  return { method: sim.method, url, headers, body: sim.body, remoteAddress: '192.0.2.1' };
}

export function verifyContext(now = NOW): VerifyContext {
  const cache = new ReplayCache(() => now);
  return { now: () => now, remember: (t, ttl) => cache.remember(t, ttl), fetch: () => Promise.reject(new Error('no fetch in tests')) };
}

export interface RecordingSink extends Intake {
  batches: Inbound[][];
  failWith?: ErrorCode;
}

/** Records what it got; with failWith set, rejects as the real sink does when it cannot store. */
export function recordingSink(): RecordingSink {
  const seen = new Set<string>();
  const sink: RecordingSink = {
    batches: [],
    checkpoint: () => Promise.resolve(undefined),
    async accept(batch): Promise<Accepted[]> {
      if (sink.failWith) throw new GatewayError(sink.failWith, 'store down', { details: { retryAfterMs: 7_500 } });
      sink.batches.push(batch);
      return batch.map((m, i) => {
        const key = m.raw.toString('base64');
        const duplicate = seen.has(key);
        seen.add(key);
        return { id: `item-${sink.batches.length}-${i}`, duplicate };
      });
    },
    item: () => Promise.resolve(undefined),
  };
  return sink;
}

export function capturingLogger(): { logger: Logger; lines: () => string } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines: () => chunks.join('') };
}

/** The adapter for `entry` and a function posting to its POST endpoint. */
export function endpointFor(entry: WebhookEntryInput, options: { now?: number; logger?: Logger } = {}) {
  const adapter = createWebhookAdapter(entry, { logger: options.logger ?? createLogger(false), now: () => options.now ?? NOW });
  const endpoints = adapter.endpoints!();
  const post = endpoints.find((e) => e.method === 'POST')!;
  const sink = recordingSink();
  startOn(adapter, sink);
  const send = (req: PushRequest): Promise<PushResponse> => post.handle(req, {});
  return { adapter, endpoints, post, sink, send };
}

export const errorCode = (res: PushResponse): string | undefined => (res.body as { error?: { code?: string } } | undefined)?.error?.code;
