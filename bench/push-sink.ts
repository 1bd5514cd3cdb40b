/**
 * Push intake throughput: N single-message submits of about 5 KB, `concurrency` in flight at
 * once, into a real SQLite store (synchronous=FULL, a fresh file) through the real parse pool.
 * Each submit resolves once its message is durable; concurrent ones share commits.
 *
 *   node dist/bench/push-sink.js [messages=5000] [concurrency=64]
 * Prints accepted messages/s, submit latency p50/p99 and the commits it took.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigSchema } from '../src/config/schema.js';
import { createLogger } from '../src/logger.js';
import { createIntake } from '../src/pipeline/intake.js';
import { ParsePool } from '../src/pipeline/pool.js';
import { contentKey } from '../src/pipeline/origin.js';
import type { Inbound } from '../src/pipeline/types.js';
import { openStore } from '../src/store/index.js';
import { argInt } from './support/args.js';

const MESSAGES = argInt(2, 5_000);
const CONCURRENCY = argInt(3, 64);

const PARAGRAPH =
  'Hello team,\r\nthe invoice for last month looks wrong: we were charged twice for the same order.\r\n' + 'Could you check?\r\n\r\n';

/** A distinct message of about 5 KB, as a provider would post it. */
function message(i: number): Inbound {
  const raw = Buffer.from(
    `Received: from mx.example.com (mx.example.com [203.0.113.9])\r\nFrom: Customer ${i} <c${i}@example.com>\r\n` +
      `To: support@acme.example\r\nSubject: Invoice question ${i}\r\nMessage-ID: <bench-${i}@example.com>\r\n` +
      `Date: Mon, 04 Mar 2024 09:00:00 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${PARAGRAPH.repeat(40)}Ref ${i}\r\n`,
  );
  const envelope = { from: `c${i}@example.com`, to: ['support@acme.example'], provider: 'mailgun', spf: 'pass' };
  const origin = { adapter: 'webhook:mailgun', instance: 'in', id: `ev-${i}`, envelope, details: { eventId: `ev-${i}` } };
  return { raw, key: contentKey(raw), route: 'hooks', receivedAt: new Date(), origin };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-push-'));
  const config = ConfigSchema.parse({
    routes: [{ name: 'hooks', source: 'acme/support', user_properties: { 'string:Recipient': '{envelope.to}' } }],
  });
  const routes = new Map(config.routes.map((r) => [r.name, r]));
  const store = await openStore(`sqlite:${join(dir, 'push.db')}`);
  let commits = 0;
  const enqueue = store.enqueue.bind(store);
  store.enqueue = (items, checkpoint, fence) => ((commits += 1), enqueue(items, checkpoint, fence));
  const pool = new ParsePool({});
  const intake = createIntake({
    store,
    routes,
    parse: (raw, o, how) => pool.parseEncoded(raw, o, how),
    parsing: {},
    maxOutbox: MESSAGES + 1,
    logger: createLogger(false),
  });
  const sink = { submit: (batch: Inbound[]) => intake.accept(batch, { whenFull: 'refuse' }) };
  const messages = Array.from({ length: MESSAGES }, (_, i) => message(i));
  // Workers load their modules on first use: start them before the clock does.
  await pool.parseEncoded(message(-1).raw, {});
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < MESSAGES) {
        const msg = messages[next++]!;
        const t = performance.now();
        await sink.submit([msg]);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const depth = await store.outboxDepth('hooks');
  await pool.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  const kb = messages[0]!.raw.length / 1024;
  console.log(
    `push sink, SQLite synchronous=FULL: ${MESSAGES} messages of ${kb.toFixed(1)} KB, concurrency ${CONCURRENCY}, ` +
      `pool ${pool.size} worker(s)\n` +
      `  accepted: ${Math.round(MESSAGES / seconds)} messages/s (${seconds.toFixed(2)} s), stored ${depth}\n` +
      `  submit latency: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms\n` +
      `  commits: ${commits} (${(MESSAGES / commits).toFixed(1)} messages each)`,
  );
}

await main();
