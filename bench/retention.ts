/**
 * What retention leaves and what it costs, on SQLite:
 *  1. the rows kept for good per message (ledger, thread index), measured with `dbstat` after N
 *     realistic messages were stored, delivered (with their ledger entries) and pruned;
 *  2. `mailgate compact` (VACUUM into incremental auto-vacuum) of a store of about M MiB made
 *     without auto-vacuum: time, and the size before and after.
 *
 *   node dist/bench/retention.js [messages=5000] [compactMiB=200]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FOLD_ROWS } from '../src/pipeline/retention.js';
import { openStore } from '../src/store/index.js';
import { compactSqlite } from '../src/store/sqlite/backup.js';
import type { OutboxInput, Store } from '../src/store/types.js';
import { argInt } from './support/args.js';
import { imapOrigin } from '../adapters/imap/identity.js';

const MESSAGES = argInt(2, 5_000);
const COMPACT_MIB = argInt(3, 200);
const SOURCE = 'acme/support-emails';
const BODY = 'Hello team,\n\nThe invoice for last month looks wrong: we were charged twice for the same order.\n'.repeat(20);

/** A realistic message: the comment id is the hex of a Message-ID, a thread of 4, 3 participants. */
function item(i: number): OutboxInput {
  const messageId = `<CAH${(1e12 + i * 7919).toString(36)}.${i}@mail.example.com>`;
  const commentId = Buffer.from(messageId, 'utf8').toString('hex');
  const from = `sender${i % 97}@customer${i % 13}.example.com`;
  return {
    route: 'bench',
    key: `imap:support:INBOX:1700000000:${i}`,
    commentId,
    document: {
      raw_email: { headers: { raw: `Message-ID: ${messageId}\r\nSubject: Invoice ${i}\r\nFrom: ${from}` }, body: { plain: BODY } },
      comment_id: commentId,
    },
    origin: imapOrigin('support', 'INBOX', 1700000000, i),
    raw: Buffer.from(`Message-ID: ${messageId}\r\n\r\n${BODY}`),
    thread: {
      source: SOURCE,
      entry: {
        commentId,
        threadId: Buffer.from(`<root-${Math.floor(i / 4)}@mail.example.com>`).toString('hex'),
        timestamp: new Date(1_700_000_000_000 + i * 60_000).toISOString(),
        from,
        participants: [from, 'support@acme.example', `cc${i % 5}@acme.example`],
      },
    },
  };
}

async function fill(store: Store, n: number): Promise<void> {
  for (let at = 0; at < n; at += 500) {
    await store.enqueue(Array.from({ length: Math.min(500, n - at) }, (_, k) => item(at + k)));
    const claimed = await store.claim('bench', 500, 'bench', 60_000);
    const hex = (s: string) => Buffer.from(s).toString('hex').padEnd(64, '0').slice(0, 64);
    const entries = claimed.map((c) => ({
      commentId: c.commentId,
      textHash: hex(`t${c.id}`),
      docHash: hex(`d${c.id}`),
      outcome: 'delivered' as const,
      updatedAt: new Date().toISOString(),
    }));
    await store.markDelivered(
      claimed.map((c) => c.id),
      { outcome: 'delivered', ledger: [{ source: SOURCE, entries }] },
    );
  }
}

/** Bytes on disk per table, its indexes included (dbstat pages). */
function tableBytes(path: string): Map<string, number> {
  const db = new Database(path, { readonly: true });
  const rows = db
    .prepare(
      `SELECT COALESCE(s.tbl_name, d.name) AS tbl, SUM(d.pgsize) AS bytes FROM dbstat d LEFT JOIN sqlite_schema s ON s.name = d.name GROUP BY tbl`,
    )
    .all() as Array<{ tbl: string; bytes: number }>;
  db.close();
  return new Map(rows.map((r) => [r.tbl, r.bytes]));
}

async function keptRows(dir: string): Promise<void> {
  const path = join(dir, 'kept.db');
  const store = await openStore(`sqlite:${path}`);
  await fill(store, MESSAGES);
  while ((await store.pruneBatch('delivered', new Date(Date.now() + 60_000), 500)) > 0);
  // The thread index entries folded in, as a retention round does (SQLite leaves them waiting at enqueue).
  while ((await store.foldThreads(FOLD_ROWS)) === FOLD_ROWS);
  await store.reclaimSpace(1 << 30);
  await store.close();
  const bytes = tableBytes(path);
  console.log(`kept for good after ${MESSAGES} messages stored, delivered and pruned (bytes per message, rows and indexes):`);
  for (const t of ['ledger', 'threads', 'outbox', 'outbox_docs', 'outbox_search', 'outbox_attempts', 'route_counters', 'ai_units_daily']) {
    console.log(`  ${t.padEnd(16)} ${((bytes.get(t) ?? 0) / MESSAGES).toFixed(1)}`);
  }
  const kept = (bytes.get('ledger') ?? 0) + (bytes.get('threads') ?? 0);
  console.log(
    `  ledger + threads: ${(kept / MESSAGES).toFixed(0)} B/message = ${(((kept / MESSAGES) * 10_000 * 365) / 1e6).toFixed(0)} MB a year at 10,000 messages a day`,
  );
}

async function compact(dir: string): Promise<void> {
  const path = join(dir, 'old.db');
  const db = new Database(path);
  db.pragma('auto_vacuum = NONE');
  db.exec('CREATE TABLE made_before (x)');
  db.close();
  const store = await openStore(`sqlite:${path}?synchronous=normal`);
  // About 14 KiB per message (document + raw); deliver all, prune half: a store half free inside.
  const n = Math.round((COMPACT_MIB * 1024) / 14);
  await fill(store, n);
  let pruned = 0;
  while (pruned < n / 2) pruned += await store.pruneBatch('delivered', new Date(Date.now() + 60_000), 500);
  await store.close();
  const r = compactSqlite(path);
  const mib = (b: number) => (b / 1024 / 1024).toFixed(0);
  console.log(
    `compact: ${mib(r.before)} MiB (half of it free pages) → ${mib(r.after)} MiB in ${(r.ms / 1000).toFixed(1)} s ` +
      `(${(r.before / 1024 / 1024 / (r.ms / 1000)).toFixed(0)} MiB/s of store); file now ${mib(statSync(path).size)} MiB`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-retention-'));
  try {
    await keptRows(dir);
    await compact(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
