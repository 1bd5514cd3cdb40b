/**
 * Store throughput: enqueue N realistic items in batches (each batch one transaction with
 * a checkpoint), then claim + mark delivered in batches, on SQLite (synchronous FULL and
 * NORMAL) and PostgreSQL (a durable throw-away server, or MAILGATE_BENCH_POSTGRES_URL).
 *
 *   node dist/bench/store.js [items=20000] [batch=100] [runs=3]
 * Prints one line per store with medians over the runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/index.js';
import type { OutboxInput, Store } from '../src/store/types.js';
import { createTestDatabase, startPostgres } from '../test/support/postgres.js';
import { argInt } from './support/args.js';
import { fileOrigin } from '../adapters/files/identity.js';

const ITEMS = argInt(2, 20_000);
const BATCH = argInt(3, 100);
const RUNS = argInt(4, 3);

const BODY = 'Hello team,\n\nThe invoice for last month looks wrong: we were charged twice for the same order.\n'.repeat(20);
const RAW = Buffer.from(`Received: from mx.example.com\r\nSubject: Invoice\r\nFrom: a@example.com\r\n\r\n${BODY}`.repeat(2));

function item(i: number): OutboxInput {
  const commentId = (0x10000000 + i).toString(16);
  return {
    route: 'bench',
    key: `files:/bench/archive.mbox:${i}`,
    commentId,
    document: {
      raw_email: { headers: { raw: `Subject: Invoice ${i}\r\nFrom: a@example.com\r\nTo: b@example.com` }, body: { plain: BODY } },
      comment_id: commentId,
      user_properties: { 'string:Mailbox': 'billing' },
    },
    origin: fileOrigin('/bench/archive.mbox', i),
    raw: RAW,
  };
}

async function once(store: Store): Promise<{ enqueue: number; deliver: number }> {
  const items = Array.from({ length: ITEMS }, (_, i) => item(i));
  let t = performance.now();
  for (let i = 0; i < ITEMS; i += BATCH) {
    await store.enqueue(items.slice(i, i + BATCH), { key: 'files:/bench/archive.mbox', value: { index: i + BATCH } });
  }
  const enqueue = ITEMS / ((performance.now() - t) / 1000);
  t = performance.now();
  for (;;) {
    const claimed = await store.claim('bench', BATCH, 'bench', 60_000);
    if (claimed.length === 0) break;
    await store.markDelivered(
      claimed.map((c) => c.id),
      { outcome: 'delivered' },
    );
  }
  const deliver = ITEMS / ((performance.now() - t) / 1000);
  return { enqueue, deliver };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function bench(label: string, fresh: () => Promise<string>): Promise<void> {
  const runs: Array<{ enqueue: number; deliver: number }> = [];
  for (let r = 0; r < RUNS; r += 1) {
    const store = await openStore(await fresh());
    runs.push(await once(store));
    await store.close();
  }
  const e = median(runs.map((x) => x.enqueue));
  const d = median(runs.map((x) => x.deliver));
  console.log(
    `${label.padEnd(24)} enqueue ${Math.round(e)} items/s   claim+deliver ${Math.round(d)} items/s   (${ITEMS} items, batches of ${BATCH}, median of ${RUNS})`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-store-'));
  let n = 0;
  try {
    await bench('sqlite synchronous=FULL', async () => `sqlite:${join(dir, `full-${(n += 1)}.db`)}`);
    await bench('sqlite synchronous=NORMAL', async () => `sqlite:${join(dir, `normal-${(n += 1)}.db`)}?synchronous=normal`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const given = process.env.MAILGATE_BENCH_POSTGRES_URL;
  const server = given === undefined || given === '' ? await startPostgres({ durable: true }) : undefined;
  process.env.MAILGATE_TEST_POSTGRES_URL = given ?? server?.url;
  try {
    await bench('postgres (fsync on)', () => createTestDatabase('mailgate_bench'));
  } finally {
    await server?.stop();
  }
}

await main();
