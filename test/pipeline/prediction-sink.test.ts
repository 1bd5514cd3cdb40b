/**
 * The prediction sink worker on real stores (SQLite and PostgreSQL), a real JSONL file and a
 * real local webhook server: every prediction reaches the sink, a failing webhook is retried,
 * a refusing one is skipped, batches are signed, and a worker that dies between sending and
 * storing its cursor resends at most that batch on restart.
 */
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createPredictionSink, sinkCheckpointKey, type PredictionSink } from '../../src/sinks/worker.js';
import { createPredictionSinks } from '../../src/sinks/index.js';
import { jsonlOutput, signature, webhookOutput, webhookVerdict, type PredictionRecord } from '../../src/sinks/outputs.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { openStore } from '../../src/store/index.js';
import type { PredictionInput, Store } from '../../src/store/types.js';
import { createTestDatabase, stopTestServer } from '../support/postgres.js';
import { startReceiver, verifySignature } from './webhook-receiver.js';

const FAST_RETRY = { baseDelayMs: 5, maxDelayMs: 20 };
const model = { version: 2, time: '2026-01-01T00:00:00.000Z' };

function inputs(from: number, n: number, label = 'Billing'): PredictionInput[] {
  return Array.from({ length: n }, (_, i) => ({
    commentId: `c${from + i}`,
    key: `files:/in.mbox:${from + i}`,
    predictions: [{ name: [label], probability: 0.5 }],
    model,
  }));
}

function lines(file: string): PredictionRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as PredictionRecord);
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-sink-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));
afterAll(stopTestServer);

const stores: Array<[string, () => Promise<string>]> = [
  ['sqlite', async () => `sqlite:${join(dir, 'm.db')}`],
  ['postgres', () => createTestDatabase('mailgate_sink')],
];

describe.each(stores)('the JSONL sink on %s', (_name, url) => {
  let store: Store;
  beforeEach(async () => {
    store = await openStore(await url());
  });
  afterEach(() => store.close());

  it('writes every prediction once, woken by notify, and a clean restart resends nothing', async () => {
    const file = join(dir, 'out', 'predictions.jsonl');
    // A poll far longer than the test: only the wake-up can make it write.
    const sink = createPredictionSink({
      store,
      route: 'p',
      output: jsonlOutput(file),
      pollMs: 3_600_000,
      batchSize: 40,
      retry: FAST_RETRY,
    });
    sink.start();
    await until(
      async () =>
        (await store.getCheckpoint(sink.key)) !== undefined || (await store.listPredictions({ route: 'p', limit: 1 })).length === 0,
    );
    await store.savePredictions('p', inputs(0, 50));
    await store.savePredictions('other', inputs(0, 5));
    sink.notify();
    await until(() => lines(file).length === 50);
    for (let i = 50; i < 300; i += 50) {
      await store.savePredictions('p', inputs(i, 50));
      sink.notify();
    }
    // A re-prediction is a newer row: it reaches the sink again.
    await store.savePredictions('p', inputs(10, 10, 'Refund'));
    expect(await sink.flush()).toBe(true);
    await sink.close();
    const written = lines(file);
    expect(written).toHaveLength(310);
    expect(new Set(written.map((l) => l.id)).size).toBe(310);
    expect(new Set(written.map((l) => l.comment_id)).size).toBe(300);
    expect(written.every((l) => l.route === 'p')).toBe(true);
    expect(written.at(-1)).toMatchObject({
      comment_id: 'c19',
      key: 'files:/in.mbox:19',
      predictions: [{ name: ['Refund'], probability: 0.5 }],
      model,
    });
    expect(sink.sent).toBe(310);
    expect(await store.getCheckpoint(sinkCheckpointKey('p', 'jsonl'))).toEqual({ cursor: written.at(-1)!.id });

    const again = createPredictionSink({ store, route: 'p', output: jsonlOutput(file), pollMs: 3_600_000, retry: FAST_RETRY });
    again.start();
    expect(await again.flush()).toBe(true);
    await again.close();
    expect(lines(file)).toHaveLength(310);
  });

  it('a worker that dies after writing a batch but before storing its cursor resends only that batch', async () => {
    const file = join(dir, 'p.jsonl');
    await store.savePredictions('p', inputs(0, 95));
    let cursorWrites = 0;
    // The "crash": the third cursor write never happens, and the worker is gone.
    const dying: Store = Object.create(store, {
      setCheckpoint: {
        value: async (key: string, value: Record<string, unknown>) => {
          if (++cursorWrites === 3) {
            void sink.close();
            throw new Error('killed');
          }
          return store.setCheckpoint(key, value);
        },
      },
    }) as Store;
    const sink: PredictionSink = createPredictionSink({
      store: dying,
      route: 'p',
      output: jsonlOutput(file),
      pollMs: 3_600_000,
      batchSize: 20,
      retry: FAST_RETRY,
    });
    sink.start();
    await until(() => cursorWrites >= 3);
    await sink.close();
    expect(lines(file)).toHaveLength(60);

    const restarted = createPredictionSink({
      store,
      route: 'p',
      output: jsonlOutput(file),
      pollMs: 3_600_000,
      batchSize: 20,
      retry: FAST_RETRY,
    });
    restarted.start();
    expect(await restarted.flush()).toBe(true);
    await restarted.close();
    const written = lines(file).map((l) => l.comment_id);
    expect(new Set(written).size).toBe(95);
    // Exactly the batch in flight (ids 41..60) came twice.
    expect(written).toHaveLength(95 + 20);
    expect(written.slice(60, 80)).toEqual(written.slice(40, 60));
  });
});

describe('the webhook sink', () => {
  let store: Store;
  beforeEach(async () => {
    store = await openStore(`sqlite:${join(dir, 'm.db')}`);
  });
  afterEach(() => store.close());

  it('POSTs signed batches, survives a run of 503s and 429s, and the signatures verify', async () => {
    const secret = 'webhook-secret-0123456789abcdef0123';
    // Five failures, then the receiver works.
    const receiver = await startReceiver((n) => (n < 4 ? 503 : n === 4 ? 429 : 200), { 'retry-after': '0' });
    try {
      await store.savePredictions('p', inputs(0, 120));
      const output = webhookOutput({ url: receiver.url, secret, route: 'p', timeoutMs: 10_000 });
      const sink = createPredictionSink({ store, route: 'p', output, pollMs: 3_600_000, batchSize: 50, retry: FAST_RETRY });
      sink.start();
      expect(await sink.flush()).toBe(true);
      await sink.close();
      expect(receiver.posts.filter((p) => p.status !== 200).map((p) => p.status)).toEqual([503, 503, 503, 503, 429]);
      for (const post of receiver.posts) {
        expect(post.contentType).toBe('application/json');
        expect(verifySignature(secret, post.body, post.signature)).toBe(true);
        expect(verifySignature('another-secret', post.body, post.signature)).toBe(false);
      }
      const accepted = receiver.accepted();
      expect(accepted.map((b) => b.predictions.length)).toEqual([50, 50, 20]);
      expect(accepted.every((b) => b.route === 'p')).toBe(true);
      expect(accepted.flatMap((b) => b.predictions.map((p) => p.comment_id))).toEqual(inputs(0, 120).map((p) => p.commentId));
    } finally {
      await receiver.close();
    }
  });

  it('skips and logs a batch the receiver refuses with a 4xx, and goes on', async () => {
    const receiver = await startReceiver((n) => (n === 0 ? 400 : 200));
    const logged: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({
        write(c: Buffer, _e, done) {
          logged.push(JSON.parse(c.toString()) as Record<string, unknown>);
          done();
        },
      }),
    });
    try {
      await store.savePredictions('p', inputs(0, 30));
      const config = ConfigSchema.parse({
        routes: [{ name: 'p', mode: 'predict', dataset: 'acme/triage', sink: { webhook: receiver.url } }],
      });
      const sinks = createPredictionSinks({ store, routes: config.routes, logger, pollMs: 3_600_000, batchSize: 20, retry: FAST_RETRY });
      sinks.start();
      expect(await sinks.flush()).toBe(true);
      await sinks.close();
      expect(receiver.posts.map((p) => p.status)).toEqual([400, 200]);
      expect(receiver.posts[0]!.signature).toBeUndefined();
      expect(receiver.accepted()[0]!.predictions.map((p) => p.comment_id)).toEqual(inputs(20, 10).map((p) => p.commentId));
      expect(logged.find((l) => l['code'] === 'MAILGATE_ERR_SINK_WEBHOOK_REJECTED')).toMatchObject({ status: 400, count: 20, route: 'p' });
    } finally {
      await receiver.close();
    }
  });

  it('classifies answers and signs the timestamp with the exact body', () => {
    expect([200, 204, 408, 429, 500, 503, 400, 401, 404, 409, 410, 302, 307, 308].map(webhookVerdict)).toEqual([
      'sent',
      'sent',
      'retry',
      'retry',
      'retry',
      'retry',
      'skip',
      'skip',
      'skip',
      'skip',
      'skip',
      'retry',
      'retry',
      'retry',
    ]);
    // HMAC-SHA256("Jefe", "1700000000.what do ya want for nothing?").
    expect(signature('Jefe', 1_700_000_000, 'what do ya want for nothing?')).toBe(
      `t=1700000000,v1=${createHmac('sha256', 'Jefe').update('1700000000.what do ya want for nothing?').digest('hex')}`,
    );
  });

  it('replay attack: a captured batch re-sent later fails verification (the timestamp is signed)', async () => {
    const secret = 'replay-secret-0123456789abcdef0123';
    const receiver = await startReceiver();
    try {
      const t0 = 1_700_000_000_000;
      const batch = [{ id: 1, route: 'p', commentId: 'c1', key: 'k', predictions: [], model: null, createdAt: new Date(t0).toISOString() }];
      const output = webhookOutput({ url: receiver.url, secret, route: 'p', timeoutMs: 10_000, now: () => t0 });
      await output.send(batch, new AbortController().signal);
      const post = receiver.posts[0]!;
      expect(post.signature).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
      expect(verifySignature(secret, post.body, post.signature, t0 + 1_000)).toBe(true);
      // An hour later the same bytes are refused; a forged newer t does not match the HMAC.
      expect(verifySignature(secret, post.body, post.signature, t0 + 3_600_000)).toBe(false);
      const forged = post.signature!.replace('t=1700000000', 't=1700003600');
      expect(verifySignature(secret, post.body, forged, t0 + 3_600_000)).toBe(false);
    } finally {
      await receiver.close();
    }
  });

  it('redirect leak: a 307/308 is not followed, the signed batch never reaches the other address', async () => {
    const elsewhere = await startReceiver();
    const receiver = await startReceiver(() => 307, { location: `${elsewhere.url}/steal` });
    try {
      const output = webhookOutput({ url: receiver.url, secret: 'redirect-secret-0123456789abcdef01', route: 'p', timeoutMs: 10_000 });
      const batch = [{ id: 1, route: 'p', commentId: 'c1', key: 'k', predictions: [], model: null, createdAt: new Date().toISOString() }];
      await expect(output.send(batch, new AbortController().signal)).rejects.toMatchObject({
        code: 'MAILGATE_ERR_SINK_WEBHOOK_FAILED',
        status: 307,
      });
      expect(receiver.posts).toHaveLength(1);
      expect(elsewhere.posts).toHaveLength(0);
    } finally {
      await receiver.close();
      await elsewhere.close();
    }
  });

  it('weak secret and plain http: an empty or short webhook_secret and http:// to a remote host are refused', () => {
    const route = (sink: Record<string, unknown>) => ({ routes: [{ name: 'p', mode: 'predict', dataset: 'acme/triage', sink }] });
    const local = 'http://127.0.0.1:9/hook';
    for (const webhook_secret of ['', 'short-secret', 'changeme-changeme-changeme-changeme']) {
      expect(ConfigSchema.safeParse(route({ webhook: local, webhook_secret })).success).toBe(false);
    }
    expect(ConfigSchema.safeParse(route({ webhook: local, webhook_secret: 'a'.repeat(8) + 'b'.repeat(24) })).success).toBe(true);
    const remote = ConfigSchema.safeParse(route({ webhook: 'http://hooks.example.net/p' }));
    expect(remote.success).toBe(false);
    expect(remote.error?.issues[0]?.path.join('.')).toBe('routes.0.sink.webhook');
    expect(ConfigSchema.safeParse(route({ webhook: 'https://hooks.example.net/p' })).success).toBe(true);
    expect(ConfigSchema.safeParse(route({ webhook: 'http://hooks.example.net/p', allow_insecure_http: true })).success).toBe(true);
    expect(ConfigSchema.safeParse(route({ webhook: 'http://localhost:8080/p' })).success).toBe(true);
  });
});
