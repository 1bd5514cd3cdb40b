/**
 * Delivery benchmark (`npm run bench:deliver`): documents per second through deliverBatch (what
 * delivery hands each claimed batch to) and the API client into the emulator, in this process, over loopback HTTP; requests made per
 * 100,000 documents beside the minimum the limits allow; and the extra requests one poison
 * document costs at batch sizes 128, 1024 and 4096.
 *
 *   node dist/bench/deliver.js [--docs 100000] [--runs 3]
 *
 * The emulator shares the process (and its CPU) with the client: the figure is the pipeline's
 * throughput on loopback, an upper bound on neither side alone.
 */
import { createApiClient } from '../src/api/client.js';
import { deliverBatch } from '../src/batcher/deliver-batch.js';
import type { DeliveryItem, SyncTarget } from '../src/batcher/types.js';
import { createEmulator } from '../src/emulator/index.js';
import { DEFAULT_SYNC_DOCUMENTS, DEFAULT_TRANSFORM_TAG, MAX_SYNC_DOCUMENTS } from '../src/limits.js';
import type { RawEmailDocument } from '../src/model/index.js';

const TOKEN = 'bench-token';
const SOURCE = 'bench/inbox';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
}

function doc(run: string, n: number, body?: string): RawEmailDocument {
  const id = `bench-${run}-${n}@example.com`;
  return {
    raw_email: {
      headers: {
        raw: `Message-ID: <${id}>\r\nFrom: Customer ${n % 997} <c${n % 997}@example.com>\r\nTo: support@example.org\r\nSubject: Order ${n}\r\nDate: Mon, 02 Mar 2026 10:00:00 +0000`,
      },
      body: { plain: body ?? `Hello, my order ${n} has not arrived yet. Could you check the tracking number? Thanks, customer ${n % 997}` },
    },
    comment_id: Buffer.from(id, 'utf8').toString('hex'),
    user_properties: { 'string:Mailbox': 'support' },
  };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function throughputRun(
  url: string,
  run: string,
  count: number,
): Promise<{ seconds: number; requests: number; comments: number; units: number }> {
  const client = createApiClient({ baseUrl: url, token: TOKEN });
  await client.ensureSource(SOURCE);
  let requests = 0;
  const target: SyncTarget = { kind: 'sync', source: SOURCE, transformTag: DEFAULT_TRANSFORM_TAG };
  const items: DeliveryItem[] = Array.from({ length: count }, (_, n) => ({ key: String(n), document: doc(run, n) }));
  const started = process.hrtime.bigint();
  const report = await deliverBatch(items, target, client, undefined, { concurrency: 2 });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const outcomes = report.outcomes;
  requests += report.requests;
  const delivered = outcomes.filter((o) => o.status === 'delivered').length;
  if (delivered !== count) throw new Error(`only ${delivered} of ${count} delivered`);
  const stats = (await (await fetch(`${url}/_emulator/stats`)).json()) as { comments: number; ai_units: number };
  return { seconds, requests, comments: stats.comments, units: stats.ai_units };
}

async function poisonCost(url: string, size: number, position: number): Promise<number> {
  const client = createApiClient({ baseUrl: url, token: TOKEN });
  await client.ensureSource(SOURCE);
  const items: DeliveryItem[] = Array.from({ length: size }, (_, n) => ({
    key: String(n),
    document: n === position ? doc(`p${size}-${position}`, n, 'x'.repeat(70_000)) : doc(`p${size}-${position}`, n),
  }));
  const report = await deliverBatch(
    items,
    { kind: 'sync', source: SOURCE, transformTag: DEFAULT_TRANSFORM_TAG, maxDocuments: size },
    client,
    undefined,
    { validate: false },
  );
  const rejected = report.outcomes.filter((o) => o.status === 'rejected').length;
  if (rejected !== 1 || report.requests !== report.splitRequests + 1)
    throw new Error(`unexpected outcome for poison at ${position} of ${size}`);
  return report.splitRequests;
}

/** Packing of 100,000 documents at the default and the maximum batch size, without sending. */
async function dryRunCounts(url: string, count: number): Promise<{ atDefault: number; atMax: number; rate: number }> {
  const client = createApiClient({ baseUrl: url, token: TOKEN });
  const items: DeliveryItem[] = Array.from({ length: count }, (_, n) => ({ key: String(n), document: doc('dry', n) }));
  const target: SyncTarget = { kind: 'sync', source: SOURCE, transformTag: DEFAULT_TRANSFORM_TAG };
  const started = process.hrtime.bigint();
  const atDefault = (await deliverBatch(items, target, client, undefined, { dryRun: true })).requests;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const atMax = (await deliverBatch(items, { ...target, maxDocuments: MAX_SYNC_DOCUMENTS }, client, undefined, { dryRun: true })).requests;
  return { atDefault, atMax, rate: count / seconds };
}

async function main(): Promise<void> {
  const count = arg('docs', 100_000);
  const runs = arg('runs', 3);
  const emulator = createEmulator({ token: TOKEN, logger: false });
  const url = await emulator.listen(0, '127.0.0.1');
  try {
    console.log(`bench:deliver — ${count} documents per run, ${runs} runs, emulator in-process on ${url}`);
    const results = [];
    for (let r = 0; r < runs; r++) {
      emulator.reset();
      const res = await throughputRun(url, `run${r}`, count);
      if (res.comments !== count || res.units !== count)
        throw new Error(`emulator holds ${res.comments} comments, billed ${res.units} units`);
      results.push(res);
      console.log(
        `  run ${r + 1}: ${(count / res.seconds).toFixed(0)} documents/s (${res.seconds.toFixed(2)} s, ${res.requests} requests)`,
      );
    }
    const rate = median(results.map((x) => count / x.seconds));
    console.log(`documents/s through deliverBatch + client + emulator (median): ${rate.toFixed(0)}`);
    const made = median(results.map((x) => x.requests));
    console.log(
      `requests made for ${count} documents: ${made} (minimum at the default ${DEFAULT_SYNC_DOCUMENTS}/request: ${Math.ceil(count / DEFAULT_SYNC_DOCUMENTS)})`,
    );
    const dry = await dryRunCounts(url, 100_000);
    console.log(
      `requests per 100,000 documents: ${dry.atDefault} at the default ${DEFAULT_SYNC_DOCUMENTS}/request (minimum ${Math.ceil(100_000 / DEFAULT_SYNC_DOCUMENTS)}); ${dry.atMax} at the spec maximum ${MAX_SYNC_DOCUMENTS}/request (minimum ${Math.ceil(100_000 / MAX_SYNC_DOCUMENTS)})`,
    );
    console.log(`client side alone (dry run: schema check, property rules, hashes, packing): ${dry.rate.toFixed(0)} documents/s`);

    emulator.reset();
    console.log('extra requests for one poison document (positions first, one third, last):');
    for (const size of [128, 1024, 4096]) {
      const costs = [];
      for (const position of [0, Math.floor(size / 3), size - 1]) costs.push(await poisonCost(url, size, position));
      const bound = 2 * Math.ceil(Math.log2(size)) + 1;
      console.log(
        `  batch ${String(size).padStart(4)}: median ${median(costs)}, max ${Math.max(...costs)} (bound 2·log2(n)+1 = ${bound}; one request per document would be ${size})`,
      );
    }
  } finally {
    await emulator.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
