/**
 * How the PostgreSQL store writes an enqueue: intake and delivery of one route never wait for
 * each other's counters, an enqueue larger than one statement stores every side row (search
 * row, thread entry, counters, checkpoint) exactly as one of a single statement does, the
 * enqueue statements of one shape are prepared once and run again with each batch's own values,
 * and an item deleted takes its search row and attempts with it.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { insertStatement, StatementShapes } from '../../src/store/postgres/insert.js';
import { PARAMS_PER_ROW } from '../../src/store/postgres/rows.js';
import type { OutboxInput, Store } from '../../src/store/types.js';
import { input } from '../contract/store.case.js';
import { createTestDatabase, stopTestServer } from '../support/postgres.js';

afterAll(stopTestServer);

const threaded = (route: string, n: number): OutboxInput =>
  input(route, n, {
    thread: {
      source: 'acme/s',
      entry: {
        commentId: `c${n}`,
        threadId: `t${n % 7}`,
        timestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, n % 60)).toISOString(),
        participants: ['a@example.com'],
      },
    },
  });

async function count(client: pg.Client, text: string): Promise<number> {
  return Number((await client.query<{ n: string }>(text)).rows[0]!.n);
}

/** A fresh database, the store open on it with `options`, and a client of the test's own: both closed after `run`. */
async function withStoreAndClient(
  options: Parameters<typeof openStore>[1],
  run: (store: Store, client: pg.Client) => Promise<void>,
): Promise<void> {
  const url = await createTestDatabase('mailgate_writes');
  const store = await openStore(url, options);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await run(store, client);
  } finally {
    await client.end();
    await store.close();
  }
}

describe('PostgreSQL enqueue writes', () => {
  it('an intake commit does not wait for a delivery commit holding its route counter (regression: one counters row per route)', async () => {
    const url = await createTestDatabase('mailgate_writes');
    const store = await openStore(url, { postgres: { poolSize: 2 } });
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      // A delivery's commit in progress: it holds its route's `delivered` counter until it commits.
      await holder.query('BEGIN');
      await holder.query(
        `INSERT INTO route_counts (route, counter, n) VALUES ('r', 'delivered', 1)
         ON CONFLICT (route, counter) DO UPDATE SET n = route_counts.n + 1`,
      );
      // Before the fix this waited for the holder's COMMIT (the test then times out).
      const result = await store.enqueue([input('r', 1), input('r', 2)], { key: 'cp', value: { at: 2 } });
      expect(result.queued).toBe(2);
      await holder.query('COMMIT');
      expect(await store.counters('r')).toEqual([{ route: 'r', enqueued: 2, delivered: 1, unchanged: 0, deadLettered: 0, aiUnits: 0 }]);
    } finally {
      await holder.end();
      await store.close();
    }
  });

  it('an enqueue of more items than one statement takes stores each key once, with its search row, thread entry, counters and the checkpoint', async () => {
    await withStoreAndClient({}, async (store, client) => {
      await store.enqueue([threaded('r', 0)]);
      // 6,000 distinct keys (two statements) plus a repeat of each of the first 100 and of key 0, stored before.
      const items = [
        ...Array.from({ length: 6000 }, (_, i) => threaded('r', i)),
        ...Array.from({ length: 100 }, (_, i) => threaded('r', i)),
      ];
      const result = await store.enqueue(items, { key: 'files:big', value: { index: 6000 } });
      expect(result).toMatchObject({ queued: 5999, deadLettered: 0, duplicates: 101 });
      expect(new Set(result.items.map((o) => o.id)).size).toBe(6000);
      expect(result.items.slice(6000).map((o) => o.id)).toEqual(result.items.slice(0, 100).map((o) => o.id));
      expect(await count(client, 'SELECT COUNT(*) AS n FROM outbox')).toBe(6000);
      expect(await count(client, 'SELECT COUNT(*) AS n FROM outbox_search')).toBe(6000);
      expect(await count(client, 'SELECT COUNT(*) AS n FROM outbox_docs')).toBe(6000);
      expect(await count(client, 'SELECT COUNT(*) AS n FROM outbox_raw')).toBe(6000);
      expect(await count(client, `SELECT COUNT(*) AS n FROM threads WHERE source = 'acme/s'`)).toBe(6000);
      expect((await store.counters('r'))[0]).toMatchObject({ enqueued: 6000 });
      expect(await store.getCheckpoint('files:big')).toEqual({ index: 6000 });
      expect((await store.threadMembers('acme/s', ['t3'])).get('t3')).toHaveLength(Math.ceil((6000 - 3) / 7));
    });
  });

  it('batches of one shape on one connection (one prepared statement) store each its own items, side rows and checkpoint', async () => {
    await withStoreAndClient({ postgres: { poolSize: 1 } }, async (store, client) => {
      const batches = [0, 1, 2, 3, 4, 5, 6].map((b) => [threaded('r', 3 * b), threaded('r', 3 * b + 1), threaded('r', 3 * b + 2)]);
      const ids: number[][] = [];
      for (const [b, items] of batches.entries()) {
        const result = await store.enqueue(items, { key: 'files:same', value: { batch: b } });
        expect(result).toMatchObject({ queued: 3, duplicates: 0 });
        ids.push(result.items.map((o) => o.id));
        expect(await store.getCheckpoint('files:same')).toEqual({ batch: b });
      }
      // The same shape again with keys stored before: duplicates answer the first items.
      const again = await store.enqueue(batches[2]!, { key: 'files:same', value: { batch: 7 } });
      expect(again).toMatchObject({ queued: 0, duplicates: 3 });
      expect(again.items.map((o) => o.id)).toEqual(ids[2]);
      const { rows } = await client.query<{ key: string; comment_id: string; headers: string }>(
        `SELECT o.key, o.comment_id, d.document->'raw_email'->'headers'->>'raw' AS headers
         FROM outbox o JOIN outbox_docs d ON d.id = o.id ORDER BY o.id`,
      );
      expect(rows).toEqual(
        Array.from({ length: 21 }, (_, n) => ({
          key: `files:/tmp/archive.mbox:${n}`,
          comment_id: (0xc0de0000 + n).toString(16),
          headers: `Subject: message ${n}\r\nFrom: a@example.com`,
        })),
      );
      const threads = await client.query<{ comment_id: string; thread_id: string }>(
        `SELECT comment_id, thread_id FROM threads ORDER BY ts, comment_id COLLATE "C"`,
      );
      expect(threads.rows).toEqual(Array.from({ length: 21 }, (_, n) => ({ comment_id: `c${n}`, thread_id: `t${n % 7}` })));
      expect(await count(client, 'SELECT COUNT(*) AS n FROM outbox_search')).toBe(21);
      expect((await store.counters('r'))[0]).toMatchObject({ enqueued: 21 });
    });
  });

  it('a key holding NUL (stored as U+FFFD) enqueued again answers its item as a duplicate (regression: "conflicts but names no item")', async () => {
    const url = await createTestDatabase('mailgate_writes');
    const store = await openStore(url);
    try {
      const nul = { ...input('r', 1), key: 'upload:a\u0000b' };
      const first = await store.enqueue([nul, input('r', 2)]);
      expect(first).toMatchObject({ queued: 2, duplicates: 0 });
      expect(first.items[0]!.key).toBe('upload:a\uFFFDb');
      const again = await store.enqueue([input('r', 3), nul]);
      expect(again).toMatchObject({ queued: 1, duplicates: 1 });
      expect(again.items[1]).toMatchObject({ id: first.items[0]!.id, duplicate: true, key: 'upload:a\uFFFDb' });
    } finally {
      await store.close();
    }
  });

  it('search rows (array literals) and thread entries (one JSON text) keep quotes, backslashes, braces and astral text; NUL and a lone surrogate become U+FFFD', async () => {
    await withStoreAndClient({}, async (store, client) => {
      const odd = 'a "quoted" \\ back\\slash {braces},commas ünï 🎉 nul:\u0000 lone:\uD800 end';
      const kept = 'a "quoted" \\ back\\slash {braces},commas ünï 🎉 nul:\uFFFD lone:\uFFFD end';
      const facts = {
        sender: `x${odd}@example.com`,
        senderName: odd,
        subject: odd,
        messageId: `<${odd}>`,
        timestamp: Date.UTC(2024, 0, 2, 3, 4, 5),
      };
      const entry = {
        commentId: 'c1',
        threadId: 't"1',
        timestamp: '2024-01-02T03:04:05.000Z',
        from: odd,
        participants: [odd, 'b@example.com'],
      };
      const key = 'upload:k\uD800"1';
      await store.enqueue([{ ...input('r', 1), key, facts, thread: { source: 'acme/s', entry } }]);
      const search = await client.query(
        `SELECT s.route, adapter, sender, sender_name, subject, message_id, msg_ts, s_subject, s_comment_id FROM outbox_search s
         JOIN outbox o USING (id) WHERE o.key = $1`,
        ['upload:k\uFFFD"1'],
      );
      expect(search.rows).toEqual([
        {
          route: 'r',
          adapter: 'files',
          sender: `x${kept}@example.com`,
          sender_name: kept,
          subject: kept,
          message_id: `<${kept}>`,
          msg_ts: new Date(facts.timestamp),
          s_subject: kept.toLowerCase(),
          s_comment_id: input('r', 1).commentId,
        },
      ]);
      const threads = await client.query('SELECT source, comment_id, thread_id, ts, timestamp, from_addr, participants::text FROM threads');
      expect(threads.rows).toEqual([
        {
          source: 'acme/s',
          comment_id: 'c1',
          thread_id: 't"1',
          ts: new Date('2024-01-02T03:04:05.000Z'),
          timestamp: '2024-01-02T03:04:05.000Z',
          from_addr: kept,
          participants: JSON.stringify([odd, 'b@example.com']),
        },
      ]);
      expect(await store.threadMembers('acme/s', ['t"1'])).toEqual(
        new Map([
          ['t"1', [{ commentId: 'c1', threadId: 't"1', timestamp: entry.timestamp, from: kept, participants: [odd, 'b@example.com'] }]],
        ]),
      );
    });
  });

  it('enqueue statements are named per shape while the row budget lasts, and sent unnamed after', () => {
    const shapes = new StatementShapes(10, 'test_enqueue');
    const shape = (rows: number, checkpoint = false) => ({
      rows,
      oneRoute: true,
      search: true,
      threads: undefined,
      count: true,
      checkpoint,
    });
    const five = shapes.of(shape(5));
    expect(five.name).toBe('test_enqueue_0');
    expect(shapes.of(shape(5))).toEqual(five);
    const withCheckpoint = shapes.of(shape(5, true));
    expect(withCheckpoint.name).toBe('test_enqueue_1');
    expect(withCheckpoint.text).not.toBe(five.text);
    // 10 rows named: a third shape would pass the budget.
    const big = shapes.of(shape(1));
    expect(big.name).toBeUndefined();
    expect(big.text).toContain('VALUES (0, NULL::text, $1::text');
    expect(shapes.of(shape(5)).name).toBe('test_enqueue_0');
  });

  it('an enqueue statement of one route sends the route once, not with every row; one of several routes, with each', () => {
    const one = insertStatement([input('r', 1), input('r', 2)], null);
    expect(one.values).toHaveLength(2 * PARAMS_PER_ROW + 2);
    expect(one.values.at(-1)).toBe('r');
    expect(one.text).toContain('VALUES (0, NULL::text, $1::text');
    const mixed = insertStatement([input('r', 1), input('q', 2)], null);
    expect(mixed.values).toHaveLength(2 * (PARAMS_PER_ROW + 1) + 1);
    expect([mixed.values[0], mixed.values[PARAMS_PER_ROW + 1]]).toEqual(['r', 'q']);
    expect(mixed.text).toContain('VALUES (0, $1::text, $2::text');
  });

  it('pruning and purging delete the search rows and attempts of their items (no foreign keys since migration 12)', async () => {
    await withStoreAndClient({}, async (store, client) => {
      await store.enqueue([input('r', 1), input('r', 2), input('r', 3)]);
      const [a, b] = await store.claim('r', 2, 'w', 60_000);
      // A delivery writes no attempts row: the delivered item's comes from its retry.
      await store.scheduleRetry([a!.id], 0, { code: 'MAILGATE_ERR_API_TIMEOUT', message: 'timed out' });
      expect((await store.claim('r', 1, 'w', 60_000)).map((i) => i.id)).toEqual([a!.id]);
      await store.markDelivered([a!.id], { outcome: 'delivered' });
      await store.deadLetter(b!.id, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' });
      const rows = async (table: string, column: string) =>
        (await client.query<{ id: string }>(`SELECT ${column} AS id FROM ${table} ORDER BY 1`)).rows.map((r) => Number(r.id));
      expect(await rows('outbox_attempts', 'item_id')).toEqual([a!.id, b!.id]);
      expect(await store.pruneDelivered(new Date(Date.now() + 60_000))).toBe(1);
      expect(await store.purgeDeadLetters({ ids: [b!.id] })).toBe(1);
      const left = await rows('outbox', 'id');
      expect(left).toHaveLength(1);
      expect(await rows('outbox_search', 'id')).toEqual(left);
      expect(await rows('outbox_attempts', 'item_id')).toEqual([]);
    });
  });
});
