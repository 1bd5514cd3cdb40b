/**
 * The console's item list at scale: fills a SQLite store with N items (default 1,000,000) by
 * bulk inserts in large transactions — a few hundred varied documents reused, their search
 * fields computed once, as intake would store them — then measures through the real HTTP
 * endpoint (fastify, admin key, JSON) the list's first page, a filtered page (state + route),
 * a deep page (cursor far back) and searches, and prints p50/p95 beside the 100 ms target.
 *
 *   node dist/bench/console.js [items=1000000] [requests=200]
 * MAILGATE_BENCH_DIR: where the store file goes (default: a temporary directory, removed after); a
 * store left there by an earlier run with as many items is measured again without refilling.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { buildApp, localPreview, type ServerDeps } from '../src/server/index.js';
import { RuntimeEvents } from '../src/pipeline/events.js';
import { createConsole } from '../src/service/console.js';
import { searchFields } from '../src/store/console.js';
import { searchRow } from '../src/store/sqlite/console.js';
import { openStore } from '../src/store/index.js';
import type { OutboxInput } from '../src/store/types.js';
import { argInt } from './support/args.js';
import { fileOrigin } from '../adapters/files/identity.js';
import { imapOrigin } from '../adapters/imap/identity.js';

const ITEMS = argInt(2, 1_000_000);
const REQUESTS = argInt(3, 200);
const TARGET_MS = 100;
const KEY = 'bench-admin-key-0123456789';
const ROUTES = ['support', 'billing', 'sales', 'triage'];
const TEMPLATES = 400;
const TX_ROWS = 50_000;

const FIRST = ['Ann', 'Bob', 'Carol', 'Dave', 'Erin', 'Frank', 'Grace', 'Heidi', 'Ivan', 'Judy', 'Mallory', 'Niaj', 'Olivia', 'Peggy'];
const LAST = ['Smith', 'Jones', 'Brown', 'Taylor', 'Wilson', 'Davies', 'Evans', 'Thomas', 'Roberts', 'Walker'];
const TOPICS = ['Invoice', 'Refund', 'Delivery', 'Password reset', 'Contract', 'Order', 'Complaint', 'Question', 'Upgrade', 'Cancel'];
const DOMAINS = ['example.com', 'example.net', 'acme.test', 'mail.example.org'];

/** A varied, realistic template: the fields the list shows come from its headers, as at enqueue. */
function template(t: number): OutboxInput {
  const first = FIRST[t % FIRST.length]!;
  const last = LAST[Math.floor(t / FIRST.length) % LAST.length]!;
  const address = `${first.toLowerCase()}.${last.toLowerCase()}${t}@${DOMAINS[t % DOMAINS.length]}`;
  const subject = `${t % 3 === 0 ? 'Re: ' : ''}${TOPICS[t % TOPICS.length]} ${1000 + t}`;
  const headers = [`From: ${first} ${last} <${address}>`, 'To: support@acme.test', `Subject: ${subject}`, `Message-ID: <t${t}@mx.test>`];
  headers.push(`Date: Tue, 03 Mar 2026 ${String(t % 24).padStart(2, '0')}:15:00 +0000`);
  const origins = [
    imapOrigin(`inbox-${t % 3}`, 'INBOX', 7, t),
    fileOrigin(`/archive/${t % 5}.mbox`, t),
    { adapter: 'webhook:mailgun', instance: 'in', id: `ev-${t}`, details: { eventId: `ev-${t}` } },
  ];
  return {
    route: ROUTES[t % ROUTES.length]!,
    key: '',
    commentId: '',
    document: { raw_email: { headers: { raw: headers.join('\r\n') }, body: { plain: `Hello,\n\nabout ${subject}.\n\nThanks, ${first}` } } },
    origin: origins[t % origins.length]!,
  };
}

/** State of item i: mostly delivered, some unchanged, queued, retrying and dead. */
function stateOf(i: number): { status: string; outcome: string | null; attempts: number; error: string | null } {
  const r = (i * 2654435761) % 100;
  if (r < 82) return { status: 'delivered', outcome: 'delivered', attempts: 0, error: null };
  if (r < 88) return { status: 'delivered', outcome: 'unchanged', attempts: 0, error: null };
  if (r < 93) return { status: 'queued', outcome: null, attempts: 0, error: null };
  const err = JSON.stringify({ code: 'MAILGATE_ERR_API_SERVER', message: 'API answered 503' });
  if (r < 97) return { status: 'queued', outcome: null, attempts: 2, error: err };
  return { status: 'dead', outcome: null, attempts: 1, error: JSON.stringify({ code: 'MAILGATE_ERR_BATCH_REJECTED', message: '422' }) };
}

function fill(path: string): void {
  const db = new Database(path);
  db.pragma('synchronous = OFF');
  const templates = Array.from({ length: TEMPLATES }, (_, t) => {
    const input = template(t);
    const f = searchFields(input);
    return { input, f, doc: JSON.stringify(input.document), origin: JSON.stringify(input.origin) };
  });
  const outbox = db.prepare(
    `INSERT INTO outbox (id, route, key, comment_id, status, attempts, next_attempt_at, enqueued_at, finished_at, outcome, last_error,
       origin, action_due) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
  );
  const docs = db.prepare('INSERT INTO outbox_docs (id, document) VALUES (?, ?)');
  const search = db.prepare(
    `INSERT INTO outbox_search (id, route, adapter, account, sender, sender_name, subject, message_id, msg_ts, s_sender, s_name,
       s_subject, s_message_id, s_comment_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const start = Date.now() - ITEMS * 1_000;
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const id = i + 1;
      const t = templates[i % TEMPLATES]!;
      const s = stateOf(i);
      const at = start + i * 1_000;
      const commentId = (0x10000000 + i).toString(16);
      outbox.run(
        id,
        t.input.route,
        `bench:${i}`,
        commentId,
        s.status,
        s.attempts,
        at + 60_000,
        at,
        s.status === 'queued' ? null : at + 500,
        s.outcome,
        s.error,
        t.origin,
      );
      docs.run(id, t.doc);
      search.run(...searchRow(id, { ...t.f, commentId }));
    }
  });
  const t0 = performance.now();
  for (let i = 0; i < ITEMS; i += TX_ROWS) {
    batch(i, Math.min(ITEMS, i + TX_ROWS));
    if ((i / TX_ROWS) % 4 === 3) process.stdout.write(`  ${i + TX_ROWS} items…\n`);
  }
  db.close();
  console.log(
    `filled ${ITEMS} items in ${((performance.now() - t0) / 1000).toFixed(1)} s (${(statSync(path).size / 2 ** 20).toFixed(0)} MiB)`,
  );
}

function countOf(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM outbox').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function minimalDeps(store: Awaited<ReturnType<typeof openStore>>): ServerDeps {
  const { deps } = createConsole({
    store,
    routes: new Map(ROUTES.map((name) => [name, { name, mode: 'sync', source: `acme/${name}` } as never])),
    adapters: [],
    logger: createLogger(false),
    events: new RuntimeEvents(),
  });
  const local = localPreview();
  return {
    ready: async () => ({ ok: true, checks: {} }),
    status: async () => ({ store: { kind: store.kind }, routes: [], adapters: [] }),
    deadLetters: { list: async () => [], get: async () => undefined, replay: async () => undefined, purge: async () => 0 },
    previewItem: async () => undefined,
    preview: local.preview,
    threads: local.threads,
    metrics: createMetrics(),
    console: deps,
  };
}

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

async function measure(base: string, name: string, paths: () => string): Promise<void> {
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now();
    const res = await fetch(`${base}${paths()}`, { headers: { authorization: `Bearer ${KEY}` } });
    const body = (await res.json()) as { items?: unknown[] };
    times.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${JSON.stringify(body)}`);
    rows += body.items?.length ?? 0;
  }
  const p50 = pct(times, 50);
  const p95 = pct(times, 95);
  const verdict = p95 < TARGET_MS ? 'ok' : 'OVER';
  console.log(
    `${name.padEnd(34)} p50 ${p50.toFixed(1).padStart(6)} ms  p95 ${p95.toFixed(1).padStart(6)} ms  ` +
      `(target p95 < ${TARGET_MS} ms: ${verdict})  rows/answer ${(rows / REQUESTS).toFixed(0)}`,
  );
}

async function main(): Promise<void> {
  const dir = process.env.MAILGATE_BENCH_DIR ?? mkdtempSync(join(tmpdir(), 'mailgate-bench-console-'));
  const path = join(dir, 'console.db');
  try {
    if (!existsSync(path) || countOf(path) !== ITEMS) {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
      await (await openStore(`sqlite:${path}`)).close();
      fill(path);
    }
    const store = await openStore(`sqlite:${path}`);
    const app = buildApp({ api_keys: [KEY] }, minimalDeps(store));
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    let n = 0;
    const next = <T>(xs: readonly T[]): T => xs[n++ % xs.length]!;
    const routes = ROUTES;
    const states = ['delivered', 'dead', 'retrying', 'queued', 'unchanged'];
    const deep = () => 1 + Math.floor((((n++ * 7919) % 1000) / 1000) * ITEMS * 0.1);
    const specific = ['ann.smith0@', 'grace taylor', 'invoice 1000', 't77@mx.test', (0x10000000 + 123_456).toString(16), 'refund 1'];
    const short = ['jo', 'gr', 're', 'in'];
    console.log(`\n${ITEMS} items, ${REQUESTS} requests each, through GET /api/items (limit 50):`);
    await measure(base, 'first page', () => '/api/items');
    await measure(base, 'filtered page (state + route)', () => `/api/items?state=${next(states)}&route=${next(routes)}`);
    const adapters = ['imap', 'files', 'webhook:mailgun'];
    await measure(
      base,
      'filtered page (adapter + state)',
      () => `/api/items?adapter=${encodeURIComponent(next(adapters))}&state=${next(states)}`,
    );
    await measure(base, 'deep page (cursor in the oldest 10%)', () => `/api/items?before=${deep()}`);
    await measure(base, 'deep filtered page', () => `/api/items?state=delivered&route=${next(routes)}&before=${deep()}`);
    await measure(base, 'search (specific prefix)', () => `/api/items?q=${encodeURIComponent(next(specific))}`);
    await measure(base, 'search (2-letter prefix)', () => `/api/items?q=${encodeURIComponent(next(short))}`);
    const t = performance.now();
    await fetch(`${base}/api/overview`, { headers: { authorization: `Bearer ${KEY}` } });
    console.log(`overview (one request, whole-store counts): ${(performance.now() - t).toFixed(0)} ms`);
    await app.close();
    await store.close();
  } finally {
    if (process.env.MAILGATE_BENCH_DIR === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
