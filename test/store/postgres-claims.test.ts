/**
 * PostgreSQL claims since migration 13: a claim, a renewal and a retry rewrite the outbox row in
 * place (no index names the lease owner), and what an owner holds is registered per claim, so
 * that taking back a dead owner's claims is exact (everything it still holds, nothing else) and
 * reads only its own registrations.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { migratePostgres, PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { input } from '../contract/store.case.js';
import { createTestDatabase, stopTestServer } from '../support/postgres.js';

afterAll(stopTestServer);

async function sql<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

describe('PostgreSQL claims', () => {
  it('claiming, renewing and retrying update the outbox row in place (no index entries per claimed item)', async () => {
    const url = await createTestDatabase('mailgate_claims');
    const store = await openStore(url);
    // Few enough that their new versions fit in the room the fill factor leaves on their page.
    await store.enqueue(Array.from({ length: 4 }, (_, i) => input('r', i)));
    const ids = (await store.claim('r', 4, 'w', 60_000)).map((c) => c.id);
    expect(await store.renewClaims(ids, 'w', 60_000)).toBe(4);
    expect(await store.scheduleRetry(ids, 0, { code: 'MAILGATE_ERR_API_UNAVAILABLE', message: 'later' })).toBe(4);
    // Closing the store ends its sessions, which report their statistics as they exit.
    await store.close();
    let rows: Array<{ upd: number; hot: number }> = [];
    for (let i = 0; i < 200 && rows[0]?.upd !== 12; i += 1) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      rows = await sql(url, `SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'outbox'`);
    }
    expect(rows).toEqual([{ upd: 12, hot: 12 }]);
  });

  it('a claim answers the enqueue time as getItem does: ISO-8601 in UTC, milliseconds truncated, whatever the session time zone', async () => {
    const url = await createTestDatabase('mailgate_claims');
    const db = new URL(url).pathname.slice(1);
    await sql(url, `ALTER DATABASE "${db}" SET timezone = 'Asia/Kolkata'`);
    const store = await openStore(url);
    try {
      await store.enqueue([input('r', 1), input('r', 2)]);
      await sql(url, `UPDATE outbox SET enqueued_at = '2024-02-29 23:59:59.999999+00' WHERE key LIKE '%:1'`);
      const claimed = await store.claim('r', 2, 'w', 60_000);
      expect(claimed[0]!.enqueuedAt).toBe('2024-02-29T23:59:59.999Z');
      for (const c of claimed) expect(c.enqueuedAt).toBe((await store.getItem(c.id))!.enqueuedAt);
      expect(claimed[1]!.enqueuedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    } finally {
      await store.close();
    }
  });

  it("taking back a dead owner's claims frees exactly what it still holds, renewed claims included, and forgets its registrations", async () => {
    let t = Date.UTC(2026, 0, 1);
    const url = await createTestDatabase('mailgate_claims');
    const store = await openStore(url, { now: () => t });
    try {
      await store.enqueue([1, 2, 3, 4].map((n) => input('r', n)));
      const [a1, a2, a3] = await store.claim('r', 3, 'a', 10_000);
      t += 8_000;
      // a renews two of its three; the third's lease runs out and b takes it (and the fourth).
      expect(await store.renewClaims([a1!.id, a2!.id], 'a', 10_000)).toBe(2);
      t += 5_000;
      expect((await store.claim('r', 10, 'b', 60_000)).map((c) => c.id)).toEqual([a3!.id, a3!.id + 1]);
      await store.registerOwner({ id: 'a', host: 'h', pid: 1, heartbeatMs: 1_000 });
      expect(await store.reapOwners(['a'], 3)).toEqual({ owners: ['a'], claims: 2 });
      expect(await sql(url, `SELECT 1 FROM outbox_claims WHERE owner = 'a'`)).toEqual([]);
      // What a held is claimable again at once; b keeps its own.
      expect((await store.claim('r', 10, 'c', 60_000)).map((c) => c.id)).toEqual([a1!.id, a2!.id]);
      expect(await store.renewClaims([a3!.id], 'b', 60_000)).toBe(1);
    } finally {
      await store.close();
    }
  });

  it("an owner's expired registrations are dropped by its next claim, so they stay bounded by its leases", async () => {
    let t = Date.UTC(2026, 0, 1);
    const url = await createTestDatabase('mailgate_claims');
    const store = await openStore(url, { now: () => t });
    try {
      await store.enqueue(Array.from({ length: 10 }, (_, i) => input('r', i)));
      for (let i = 0; i < 5; i += 1) {
        const [item] = await store.claim('r', 1, 'a', 1_000);
        await store.scheduleRetry([item!.id], 60_000, { code: 'MAILGATE_ERR_API_UNAVAILABLE', message: 'later' });
        t += 2_000;
      }
      expect(await sql(url, `SELECT 1 FROM outbox_claims`)).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('a claim delivered whole is forgotten at once; one delivered in part stays registered, and its owner gives back the rest', async () => {
    const url = await createTestDatabase('mailgate_claims');
    const store = await openStore(url);
    try {
      await store.enqueue(Array.from({ length: 6 }, (_, i) => input('r', i)));
      const whole = (await store.claim('r', 3, 'a', 60_000)).map((c) => c.id);
      const part = (await store.claim('r', 3, 'a', 60_000)).map((c) => c.id);
      expect(await sql(url, `SELECT 1 FROM outbox_claims WHERE owner = 'a'`)).toHaveLength(2);
      // Delivered with ids of another claim beside them: still the whole of the first.
      expect(await store.markDelivered([...whole, part[0]!], { outcome: 'delivered' })).toBe(4);
      expect(await sql(url, `SELECT ids FROM outbox_claims WHERE owner = 'a'`)).toEqual([{ ids: part.map(String) }]);
      await store.registerOwner({ id: 'a', host: 'h', pid: 1, heartbeatMs: 1_000 });
      expect(await store.deregisterOwner('a')).toBe(2);
      expect(await sql(url, `SELECT 1 FROM outbox_claims`)).toEqual([]);
      expect((await store.claim('r', 10, 'b', 60_000)).map((c) => c.id)).toEqual(part.slice(1));
    } finally {
      await store.close();
    }
  });

  it('claims held when the store is upgraded to registered claims are registered, and taken back when their owner dies', async () => {
    const url = await createTestDatabase('mailgate_claims');
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await migratePostgres(
      pool,
      PG_MIGRATIONS.filter((m) => m.version < 13),
    );
    await pool.end();
    // Two items an owner of the previous version holds (its claims were not registered).
    await sql(
      url,
      `INSERT INTO outbox (route, key, comment_id, status, origin, lease_owner, lease_expires_at)
       VALUES ('r', 'k1', 'c1', 'queued', '{}', 'old', now() + interval '1 hour'),
              ('r', 'k2', 'c2', 'queued', '{}', 'old', now() + interval '1 hour');
       INSERT INTO outbox_docs (id, document) SELECT id, '{"raw_email":{"headers":{"raw":"S: x"},"body":{"plain":"b"}}}' FROM outbox`,
    );
    const store = await openStore(url);
    try {
      await store.registerOwner({ id: 'old', host: 'h', pid: 1, heartbeatMs: 1_000 });
      expect(await store.reapOwners(['old'], 3)).toEqual({ owners: ['old'], claims: 2 });
      expect(await store.claim('r', 10, 'new', 60_000)).toHaveLength(2);
    } finally {
      await store.close();
    }
  });
});
