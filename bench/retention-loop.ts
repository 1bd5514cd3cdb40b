/**
 * What a retention round costs the event loop of `mailgate serve` on SQLite: a store with
 * `items` delivered items (about 14 KB each: document and raw bytes) that are all past
 * `retention.delivered_s`, pruned by one round (deletes, incremental vacuum, WAL checkpoint)
 * while a writer stores one small item every 5 ms, as intake does. Printed per build: the
 * round's length, the event loop's longest delay during it and during its last step, giving the
 * space back (`monitorEventLoopDelay`), and the longest store write the writer waited for. `--vs-dist <dist folder>` runs the same rounds
 * with another build's store and retention (the reference, e.g. main's), interleaved with this
 * build's, and prints the medians side by side.
 *
 *   node dist/bench/retention-loop.js [items=3000] [rounds=5] [--vs-dist /path/to/dist]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { createRetention as CreateRetention } from '../src/pipeline/retention.js';
import type { RetentionSchema as Schema } from '../src/config/schema.js';
import type { openStore as OpenStore } from '../src/store/index.js';
import type { MaintenanceStore, OutboxInput, Store } from '../src/store/types.js';
import { createLogger } from '../src/logger.js';
import { argInt } from './support/args.js';

const ITEMS = argInt(2, 3_000);
const ROUNDS = argInt(3, 5);
const vsAt = process.argv.indexOf('--vs-dist');
const VS = vsAt > 0 ? process.argv[vsAt + 1] : undefined;
const DAY = 86_400_000;

interface Build {
  name: string;
  openStore: typeof OpenStore;
  createRetention: typeof CreateRetention;
  RetentionSchema: typeof Schema;
}

async function load(name: string, dist: string): Promise<Build> {
  const at = (p: string) => pathToFileURL(join(resolve(dist), p)).href;
  const store = (await import(at('src/store/index.js'))) as { openStore: typeof OpenStore };
  const retention = (await import(at('src/pipeline/retention.js'))) as { createRetention: typeof CreateRetention };
  const schema = (await import(at('src/config/schema.js'))) as { RetentionSchema: typeof Schema };
  return { name, openStore: store.openStore, createRetention: retention.createRetention, RetentionSchema: schema.RetentionSchema };
}

const BODY = 'The invoice for last month looks wrong: we were charged twice for the same order.\n'.repeat(50);

function item(route: string, i: number): OutboxInput {
  const commentId = Buffer.from(`<m${i}@bench.example>`).toString('hex');
  return {
    route,
    key: `files:/bench.mbox:${i}`,
    commentId,
    document: {
      raw_email: { headers: { raw: `Message-ID: <m${i}@bench.example>\r\nSubject: s${i}` }, body: { plain: BODY } },
      comment_id: commentId,
    },
    origin: { adapter: 'files', instance: 'bench', id: `/bench.mbox:${i}`, details: {} },
    raw: Buffer.alloc(10_000, 0x61),
  };
}

async function fill(store: Store, n: number): Promise<void> {
  for (let at = 0; at < n; at += 500) {
    await store.enqueue(Array.from({ length: Math.min(500, n - at) }, (_, k) => item('r', at + k)));
    const claimed = await store.claim('r', 500, 'bench', 60_000);
    await store.markDelivered(
      claimed.map((c) => c.id),
      { outcome: 'delivered' },
    );
  }
}

interface Figures {
  roundMs: number;
  loopMaxMs: number;
  /** The event loop's longest delay while space was given back (vacuum and checkpoint). */
  reclaimMaxMs: number;
  writeMaxMs: number;
  pruned: number;
}

async function round(b: Build, dir: string, r: number): Promise<Figures> {
  const store = await b.openStore(`sqlite:${join(dir, `${b.name}-${r}.db`)}`);
  try {
    await fill(store, ITEMS);
    // The loop's stalls (gaps between ticks of a 1 ms timer), to be laid over the round's last
    // step: a synchronous step is over before any timer or histogram could tell.
    const gaps: Array<[number, number]> = [];
    let tick = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      if (now - tick > 2) gaps.push([tick, now]);
      tick = now;
    }, 1);
    let window: [number, number] = [0, 0];
    const watched: MaintenanceStore = {
      pruneBatch: (...a) => store.pruneBatch(...a),
      foldSearches: (limit) => store.foldSearches(limit),
      foldThreads: (limit) => store.foldThreads(limit),
      pruneThreads: (...a) => store.pruneThreads(...a),
      pruneCheckpoints: (...a) => store.pruneCheckpoints(...a),
      storeStats: () => store.storeStats(),
      probeSpace: (bytes) => store.probeSpace(bytes),
      reclaimSpace: async (maxBytes: number) => {
        const from = performance.now();
        try {
          return await store.reclaimSpace(maxBytes);
        } finally {
          window = [from, performance.now()];
        }
      },
    };
    const retention = b.createRetention({
      store: watched,
      retention: b.RetentionSchema.parse({}),
      logger: createLogger({ level: 'silent' }),
      now: () => Date.now() + 8 * DAY,
    });
    let writing = true;
    let writeMaxMs = 0;
    let next = 1_000_000;
    const writer = (async () => {
      while (writing) {
        const t = performance.now();
        await store.enqueue([item('w', (next += 1))]);
        writeMaxMs = Math.max(writeMaxMs, performance.now() - t);
        await new Promise((ok) => setTimeout(ok, 5));
      }
    })();
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const t = performance.now();
    const res = await retention.runOnce();
    const roundMs = performance.now() - t;
    // A block at the round's end shows only once the timers run again.
    await new Promise((ok) => setTimeout(ok, 10));
    h.disable();
    clearInterval(ticker);
    writing = false;
    await writer;
    const overlap = ([from, to]: [number, number]) => Math.max(0, Math.min(to, window[1]) - Math.max(from, window[0]));
    const reclaimMaxMs = Math.max(0, ...gaps.map(overlap));
    return { roundMs, loopMaxMs: h.max / 1e6, reclaimMaxMs, writeMaxMs, pruned: res.delivered };
  } finally {
    await store.close();
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-retention-loop-'));
  const builds = [await load('this', resolve(import.meta.dirname, '..'))];
  if (VS !== undefined) builds.unshift(await load('vs', VS));
  const results = new Map<string, Figures[]>(builds.map((b) => [b.name, []]));
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        const f = await round(b, dir, r);
        results.get(b.name)!.push(f);
        console.log(
          `round ${r + 1} ${b.name.padEnd(4)}: pruned ${f.pruned} in ${f.roundMs.toFixed(0)} ms; loop delay max ${f.loopMaxMs.toFixed(1)} ms, ` +
            `while giving space back ${f.reclaimMaxMs.toFixed(1)} ms; longest store write ${f.writeMaxMs.toFixed(1)} ms`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`medians of ${ROUNDS} rounds, ${ITEMS} delivered items pruned a round (writer: one item every 5 ms):`);
  for (const [name, fs] of results) {
    const m = (k: keyof Figures) => median(fs.map((f) => f[k])).toFixed(1);
    console.log(
      `  ${name === 'vs' ? `reference (${VS})` : 'this build'}: round ${m('roundMs')} ms, loop delay max ${m('loopMaxMs')} ms, while giving space back ${m('reclaimMaxMs')} ms, longest store write ${m('writeMaxMs')} ms`,
    );
  }
}

await main();
