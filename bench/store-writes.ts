/**
 * Bytes the SQLite store writes per message: a store is filled with `prefill` items, then
 * `items` more are enqueued in commits of `batch` (synchronous=FULL, as intake does), then
 * claimed and marked delivered in commits of `batch`. Per message it prints the bytes the
 * process wrote (WAL frames and checkpoints: /proc/self/io `wchar`), the write calls, and the
 * CPU time, for each phase. Random keys and facts, as SMTP's SHA-256 keys and real senders give.
 * The enqueue leaves the console's search rows and its thread index entries for later
 * (docs/store.md): the prefill is folded before the measured enqueue, as a retention round would,
 * and the `fold` phase then moves the measured items' rows into the indexed search table and
 * thread index, FOLD_ROWS a transaction as serve does (per message: both tables' rows).
 *
 *   node dist/bench/store-writes.js [prefill=100000] [items=2000] [batch=8] [runs=3]
 * MAILGATE_BENCH_PAGE_SIZE creates the store with that page size (default: the store's own).
 * MAILGATE_BENCH_DROP drops the named indexes (comma-separated) after the schema is made.
 * MAILGATE_BENCH_BY_BTREE=1 adds one traced run, left out of the medians (it reads the -wal file
 * after every commit): the WAL frames per message each table and index took, enqueue and deliver.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FOLD_ROWS } from '../src/pipeline/retention.js';
import { openStore } from '../src/store/index.js';
import type { OutboxInput, Store } from '../src/store/types.js';
import { argInt } from './support/args.js';
import { WalFrames } from './support/wal-frames.js';

const PREFILL = argInt(2, 100_000);
const ITEMS = argInt(3, 2_000);
const BATCH = argInt(4, 8);
const RUNS = argInt(5, 3);
const PAGE_SIZE = process.env.MAILGATE_BENCH_PAGE_SIZE;
const BY_BTREE = process.env.MAILGATE_BENCH_BY_BTREE === '1';

const BODY = 'Hello team,\n\nThe invoice for last month looks wrong: we were charged twice for the same order.\n'.repeat(30);
const hex = (s: string): string => createHash('sha256').update(s).digest('hex');

function item(i: number): OutboxInput {
  const h = hex(`m${i}`);
  const messageId = `${h.slice(0, 20)}@mail.example.com`;
  const commentId = Buffer.from(messageId).toString('hex');
  const sender = `user${h.slice(20, 24)}@example${h.charCodeAt(30) % 50}.com`;
  const subject = `Re: invoice ${h.slice(24, 32)} for order`;
  const headers = `Message-ID: <${messageId}>\r\nSubject: ${subject}\r\nFrom: ${sender}\r\nTo: billing@example.com`;
  const raw = Buffer.from(`Received: from mx.example.com\r\n${headers}\r\n\r\n${BODY}`);
  return {
    route: 'bench',
    key: `smtp:${hex(raw.toString('latin1'))}`,
    commentId,
    document: { raw_email: { headers: { raw: headers }, body: { plain: BODY } }, comment_id: commentId },
    origin: { adapter: 'smtp', instance: 'mx', id: h.slice(0, 16), details: { from: sender } },
    facts: { sender, senderName: `User ${h.slice(20, 24)}`, subject, messageId, timestamp: 1_700_000_000_000 + i * 1000 },
    thread: {
      source: 'acme/support',
      entry: {
        commentId,
        threadId: h.slice(32, 48),
        timestamp: new Date(1_700_000_000_000 + i * 1000).toISOString(),
        from: sender,
        participants: [sender, 'billing@example.com'],
      },
    },
    raw,
  };
}

interface Io {
  wchar: number;
  syscw: number;
  cpu: number;
  wall: number;
}

function io(): Io {
  const text = readFileSync('/proc/self/io', 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  const u = process.cpuUsage();
  return { wchar: field('wchar'), syscw: field('syscw'), cpu: (u.user + u.system) / 1000, wall: performance.now() };
}

const per = (a: Io, b: Io, n: number): Io => ({
  wchar: (b.wchar - a.wchar) / n,
  syscw: (b.syscw - a.syscw) / n,
  cpu: ((b.cpu - a.cpu) * 1000) / n,
  wall: ((b.wall - a.wall) * 1000) / n,
});

type Frames = ReturnType<WalFrames['byBtree']>;

interface Run {
  enqueue: Io;
  fold: Io;
  deliver: Io;
  pageSize: number;
  /** With a trace: the frames of each phase by b-tree, and the messages of each. */
  frames?: { enqueue: Frames; deliver: Frames; delivered: number };
}

function pageSizeOf(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return db.pragma('page_size', { simple: true }) as number;
  } finally {
    db.close();
  }
}

async function once(path: string, trace = false): Promise<Run> {
  if (PAGE_SIZE !== undefined) {
    const db = new Database(path);
    db.pragma(`page_size = ${Number(PAGE_SIZE)}`);
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('CREATE TABLE page_size_probe (a); DROP TABLE page_size_probe;');
    db.close();
  }
  const store: Store = await openStore(`sqlite:${path}`);
  const drop = (process.env.MAILGATE_BENCH_DROP ?? '').split(',').filter((x) => x !== '');
  if (drop.length > 0) {
    const db = new Database(path);
    for (const name of drop) db.exec(`DROP INDEX ${name}`);
    db.close();
  }
  for (let i = 0; i < PREFILL; i += 1000) {
    await store.enqueue(Array.from({ length: Math.min(1000, PREFILL - i) }, (_, j) => item(i + j)));
  }
  // Delivered, as most of a live store is.
  for (;;) {
    const claimed = await store.claim('bench', 1000, 'fill', 60_000);
    if (claimed.length === 0) break;
    await store.markDelivered(
      claimed.map((c) => c.id),
      { outcome: 'delivered' },
    );
  }
  // Folded, as a retention round would have.
  for (let n = FOLD_ROWS; n === FOLD_ROWS; ) n = await store.foldSearches(FOLD_ROWS);
  for (let n = FOLD_ROWS; n === FOLD_ROWS; ) n = await store.foldThreads(FOLD_ROWS);
  const pageSize = pageSizeOf(path);
  const enqueued = trace ? new WalFrames(`${path}-wal`, pageSize) : undefined;
  const deliveredFrames = trace ? new WalFrames(`${path}-wal`, pageSize) : undefined;
  enqueued?.reset();
  const items = Array.from({ length: ITEMS }, (_, i) => item(PREFILL + i));
  const a = io();
  for (let i = 0; i < ITEMS; i += BATCH) {
    await store.enqueue(items.slice(i, i + BATCH));
    enqueued?.scan();
  }
  const enqueuedAt = io();
  let folded = 0;
  for (let n = FOLD_ROWS; n === FOLD_ROWS; folded += n) n = await store.foldSearches(FOLD_ROWS);
  for (let n = FOLD_ROWS; n === FOLD_ROWS; ) n = await store.foldThreads(FOLD_ROWS);
  const b = io();
  // Named while the phase's pages still hold what it wrote (delivery frees the raw bytes' pages).
  const enqueuedByBtree = enqueued === undefined ? undefined : named(path, enqueued);
  deliveredFrames?.reset();
  let delivered = 0;
  for (;;) {
    const claimed = await store.claim('bench', BATCH, 'bench', 60_000);
    deliveredFrames?.scan();
    if (claimed.length === 0) break;
    delivered += await store.markDelivered(
      claimed.map((c) => c.id),
      { outcome: 'delivered' },
    );
    deliveredFrames?.scan();
  }
  const c = io();
  const run: Run = {
    enqueue: per(a, enqueuedAt, ITEMS),
    fold: per(enqueuedAt, b, Math.max(folded, 1)),
    deliver: per(b, c, delivered),
    pageSize,
  };
  if (enqueuedByBtree !== undefined && deliveredFrames !== undefined) {
    run.frames = { enqueue: enqueuedByBtree, deliver: named(path, deliveredFrames), delivered };
  }
  await store.close();
  return run;
}

/** The frames counted so far by b-tree, named by a reader of the open store. */
function named(path: string, frames: WalFrames): Frames {
  const db = new Database(path, { readonly: true });
  try {
    return frames.byBtree(db);
  } finally {
    db.close();
  }
}

/** The traced run's frames per message, one line per b-tree. */
function showFrames(run: Run): string[] {
  const f = run.frames!;
  const kib = (frames: number, n: number): string => ((frames * (run.pageSize + 24)) / n / 1024).toFixed(1);
  const lines = [
    `WAL frames per message by b-tree (one more run, traced): enqueue ${(f.enqueue.total / ITEMS).toFixed(2)} ` +
      `(${kib(f.enqueue.total, ITEMS)} KiB), deliver ${(f.deliver.total / f.delivered).toFixed(2)} (${kib(f.deliver.total, f.delivered)} KiB)`,
  ];
  const deliver = new Map(f.deliver.rows.map((r) => [r.name, r.frames]));
  const names = [
    ...f.enqueue.rows.map((r) => r.name),
    ...f.deliver.rows.map((r) => r.name).filter((n) => !f.enqueue.rows.some((r) => r.name === n)),
  ];
  const enqueue = new Map(f.enqueue.rows.map((r) => [r.name, r.frames]));
  for (const name of names) {
    const e = enqueue.get(name) ?? 0;
    const d = deliver.get(name) ?? 0;
    lines.push(
      `  ${name.padEnd(30)} enqueue ${(e / ITEMS).toFixed(2).padStart(5)} (${((100 * e) / f.enqueue.total).toFixed(0).padStart(2)} %)` +
        `  deliver ${(d / f.delivered).toFixed(2).padStart(5)}`,
    );
  }
  return lines;
}

const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
const show = (label: string, xs: Io[]): string =>
  `${label} ${(median(xs.map((x) => x.wchar)) / 1024).toFixed(1).padStart(6)} KiB written  ${median(xs.map((x) => x.syscw))
    .toFixed(1)
    .padStart(5)} writes  ${median(xs.map((x) => x.cpu))
    .toFixed(0)
    .padStart(4)} µs CPU  ${median(xs.map((x) => x.wall))
    .toFixed(0)
    .padStart(5)} µs wall`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-writes-'));
  const runs: Run[] = [];
  let traced: Run | undefined;
  try {
    for (let r = 0; r < RUNS; r += 1) runs.push(await once(join(dir, `s${r}.db`)));
    if (BY_BTREE) traced = await once(join(dir, 'traced.db'), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `sqlite, ${runs[0]!.pageSize} B pages, ${PREFILL} items before, ${ITEMS} measured in commits of ${BATCH}, per message, median of ${RUNS}:`,
  );
  console.log(
    `  ${show(
      'enqueue',
      runs.map((r) => r.enqueue),
    )}`,
  );
  console.log(
    `  ${show(
      'fold   ',
      runs.map((r) => r.fold),
    )}`,
  );
  console.log(
    `  ${show(
      'deliver',
      runs.map((r) => r.deliver),
    )}`,
  );
  if (traced !== undefined) for (const line of showFrames(traced)) console.log(line);
}

await main();
