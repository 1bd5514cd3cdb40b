/**
 * A rolling upgrade on PostgreSQL, as far as today's code decides it: replicas of the new version
 * starting together on a store of the previous schema migrate it once (the advisory lock: one
 * applies, the others find the work done) and all carry on; a replica of the previous release
 * that restarts then is refused rather than writing to a schema it does not know. The previous
 * release's open is today's migration runner with its list of migrations (the runner and
 * migrations 1 to latest − 1 are unchanged since that release). Old and new code writing side by
 * side is not run here (it would need the previous release built): docs/store.md "Upgrading"
 * states what each migration allows, by inspection.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { migratePostgres, PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { expectCode, input } from '../contract/store.case.js';
import { createTestDatabase, stopTestServer } from '../support/postgres.js';

afterAll(async () => {
  await stopTestServer();
});

const LATEST = Math.max(...PG_MIGRATIONS.map((m) => m.version));
const PREVIOUS = PG_MIGRATIONS.filter((m) => m.version < LATEST);

describe('rolling upgrade on PostgreSQL', () => {
  it('new replicas starting together migrate the previous schema once and carry on; a restarted old replica is refused', async () => {
    const url = await createTestDatabase('mailgate_rolling');
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    try {
      // The store as the previous release left it, with queued work.
      expect(await migratePostgres(pool, PREVIOUS)).toBe(LATEST - 1);
      const old = await pool.query<{ v: number }>('SELECT MAX(version) AS v FROM schema_migrations');
      expect(old.rows[0]!.v).toBe(LATEST - 1);
      await pool.query(
        `INSERT INTO outbox (route, key, comment_id, status, next_attempt_at, enqueued_at, origin)
         VALUES ('r', 'k-old', 'c-old', 'queued', now(), now(), '{"adapter":"files"}')`,
      );
      const [id] = (await pool.query<{ id: string }>(`SELECT id FROM outbox WHERE key = 'k-old'`)).rows.map((r) => Number(r.id));
      await pool.query(
        `INSERT INTO outbox_docs (id, document) VALUES ($1, '{"raw_email":{"headers":{"raw":"S: x"},"body":{"plain":"b"}}}')`,
        [id],
      );

      // Three replicas of the new version start at once.
      const replicas = await Promise.all([1, 2, 3].map(() => openStore(url, { postgres: { poolSize: 2 } })));
      try {
        const applied = await pool.query<{ version: number }>('SELECT version FROM schema_migrations WHERE version = $1', [LATEST]);
        expect(applied.rowCount).toBe(1);
        for (const r of replicas) expect(await r.migrate()).toBe(LATEST);
        // The old work is claimed by exactly one of them; new work flows through any.
        const claims = await Promise.all(replicas.map((r, i) => r.claim('r', 10, `new-${i}`, 60_000)));
        expect(claims.flat().map((c) => c.key)).toEqual(['k-old']);
        expect((await replicas[1]!.enqueue([input('r', 1)])).queued).toBe(1);
        expect((await replicas[2]!.claim('r', 10, 'new-2', 60_000)).map((c) => c.key)).toEqual([input('r', 1).key]);

        // A replica of the previous release restarting now: refused, nothing written.
        await expectCode(migratePostgres(pool, PREVIOUS), 'MAILGATE_ERR_STORE_MIGRATION');
        expect((await pool.query('SELECT version FROM schema_migrations')).rowCount).toBe(PG_MIGRATIONS.length);
      } finally {
        for (const r of replicas) await r.close();
      }
    } finally {
      await pool.end();
    }
  });
});
