/**
 * How the PostgreSQL store writes an enqueue: intake and delivery of one route never wait for
 * each other's counters, an enqueue larger than one statement stores every side row (search
 * row, thread entry, counters, checkpoint) exactly as one of a single statement does, and an item
 * deleted takes its search row and attempts with it.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import type { OutboxInput } from '../../src/store/types.js';
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
    const url = await createTestDatabase('mailgate_writes');
    const store = await openStore(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
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
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('pruning and purging delete the search rows and attempts of their items (no foreign keys since migration 12)', async () => {
    const url = await createTestDatabase('mailgate_writes');
    const store = await openStore(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await store.enqueue([input('r', 1), input('r', 2), input('r', 3)]);
      const [a, b] = await store.claim('r', 2, 'w', 60_000);
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
    } finally {
      await client.end();
      await store.close();
    }
  });
});
