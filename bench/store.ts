/**
 * Store throughput: enqueue N realistic items in batches (each batch one transaction with
 * a checkpoint), then claim + mark delivered in batches, on SQLite (synchronous FULL and
 * NORMAL) and PostgreSQL (a durable throw-away server, or MAILGATE_BENCH_POSTGRES_URL).
 * Beside each store, its reference: the same items written the plain way through
 * better-sqlite3 or pg into one table (support/store-reference.ts), run after it in each round.
 *
 *   node dist/bench/store.js [items=20000] [batch=100] [runs=3]
 * Prints per store and per reference the medians over the runs: items/s and this process's CPU
 * per item (PostgreSQL's own CPU is not in it), and the store as a share of its reference.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/index.js';
import type { OutboxInput, Store } from '../src/store/types.js';
import { createTestDatabase, startPostgres } from '../test/support/postgres.js';
import { argInt } from './support/args.js';
import { postgresReference, sqliteReference, type BenchWrites } from './support/store-reference.js';
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

/** The store behind the writes the bench times. */
function storeWrites(store: Store): BenchWrites {
  return {
    enqueue: (items, checkpoint) => store.enqueue(items, checkpoint).then(() => undefined),
    claim: async (route, limit) => (await store.claim(route, limit, 'bench', 60_000)).map((c) => c.id),
    markDelivered: (ids) => store.markDelivered(ids, { outcome: 'delivered' }).then(() => undefined),
    close: () => store.close(),
  };
}

interface Run {
  enqueue: number;
  deliver: number;
  /** This process's CPU per item, µs. */
  enqueueCpu: number;
  deliverCpu: number;
}

async function phase(work: () => Promise<void>): Promise<{ rate: number; cpu: number }> {
  const t = performance.now();
  const c = process.cpuUsage();
  await work();
  const cpu = process.cpuUsage(c);
  return { rate: ITEMS / ((performance.now() - t) / 1000), cpu: (cpu.user + cpu.system) / ITEMS };
}

async function once(w: BenchWrites): Promise<Run> {
  const items = Array.from({ length: ITEMS }, (_, i) => item(i));
  const enqueue = await phase(async () => {
    for (let i = 0; i < ITEMS; i += BATCH) {
      await w.enqueue(items.slice(i, i + BATCH), { key: 'files:/bench/archive.mbox', value: { index: i + BATCH } });
    }
  });
  const deliver = await phase(async () => {
    for (;;) {
      const ids = await w.claim('bench', BATCH);
      if (ids.length === 0) break;
      await w.markDelivered(ids);
    }
  });
  return { enqueue: enqueue.rate, deliver: deliver.rate, enqueueCpu: enqueue.cpu, deliverCpu: deliver.cpu };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

interface Medians {
  enqueue: number;
  deliver: number;
  enqueueCpu: number;
  deliverCpu: number;
}

function medians(runs: Run[]): Medians {
  return {
    enqueue: median(runs.map((x) => x.enqueue)),
    deliver: median(runs.map((x) => x.deliver)),
    enqueueCpu: median(runs.map((x) => x.enqueueCpu)),
    deliverCpu: median(runs.map((x) => x.deliverCpu)),
  };
}

const fmt = (m: Medians): string =>
  `enqueue ${String(Math.round(m.enqueue)).padStart(6)} items/s ${m.enqueueCpu.toFixed(0).padStart(4)} µs CPU/item   ` +
  `claim+deliver ${String(Math.round(m.deliver)).padStart(6)} items/s ${m.deliverCpu.toFixed(0).padStart(4)} µs CPU/item`;

/** Each round opens the store on a fresh database, then the reference on another: A, B, A, B, … */
async function bench(label: string, store: () => Promise<BenchWrites>, reference: () => Promise<BenchWrites>): Promise<void> {
  const own: Run[] = [];
  const ref: Run[] = [];
  for (let r = 0; r < RUNS; r += 1) {
    for (const [open, into] of [
      [store, own],
      [reference, ref],
    ] as const) {
      const w = await open();
      into.push(await once(w));
      await w.close();
    }
  }
  const m = medians(own);
  const b = medians(ref);
  console.log(`${label.padEnd(26)} ${fmt(m)}   (${ITEMS} items, batches of ${BATCH}, median of ${RUNS})`);
  console.log(`${'  reference'.padEnd(26)} ${fmt(b)}`);
  console.log(
    `${'  store / reference'.padEnd(26)} enqueue ${(m.enqueue / b.enqueue).toFixed(2)}× the rate, ${(m.enqueueCpu / b.enqueueCpu).toFixed(2)}× the CPU;` +
      ` claim+deliver ${(m.deliver / b.deliver).toFixed(2)}× the rate, ${(m.deliverCpu / b.deliverCpu).toFixed(2)}× the CPU`,
  );
}

async function main(): Promise<void> {
  console.log('reference: the same items through plain better-sqlite3 / pg into one table (no search row, ledger, threads or attempts)');
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-store-'));
  let n = 0;
  const file = (name: string): string => join(dir, `${name}-${(n += 1)}.db`);
  try {
    await bench(
      'sqlite synchronous=FULL',
      async () => storeWrites(await openStore(`sqlite:${file('full')}`)),
      async () => sqliteReference(file('reference-full'), 'FULL'),
    );
    await bench(
      'sqlite synchronous=NORMAL',
      async () => storeWrites(await openStore(`sqlite:${file('normal')}?synchronous=normal`)),
      async () => sqliteReference(file('reference-normal'), 'NORMAL'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const given = process.env.MAILGATE_BENCH_POSTGRES_URL;
  const server = given === undefined || given === '' ? await startPostgres({ durable: true }) : undefined;
  process.env.MAILGATE_TEST_POSTGRES_URL = given ?? server?.url;
  try {
    await bench(
      'postgres (fsync on)',
      async () => storeWrites(await openStore(await createTestDatabase('mailgate_bench'))),
      async () => postgresReference(await createTestDatabase('mailgate_bench_ref')),
    );
  } finally {
    await server?.stop();
  }
}

await main();
