import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { pgArray, retryRolledBack } from '../../src/store/postgres/db.js';
import { PG_MIGRATIONS, migratePostgres } from '../../src/store/postgres/migrations.js';
import { expectCode, input, storeContract } from '../contract/store.case.js';
import { createTestDatabase, freePort, stopTestServer } from '../support/postgres.js';

afterAll(stopTestServer);

storeContract('postgres', async () => {
  const url = await createTestDatabase('mailgate_store');
  return { open: (options) => openStore(url, { ...options, postgres: { poolSize: 4 } }) };
});

async function sql(url: string, text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}

describe('PostgreSQL store specifics', () => {
  it('migrates once when several replicas start together', async () => {
    const url = await createTestDatabase('mailgate_store');
    const stores = await Promise.all(Array.from({ length: 4 }, () => openStore(url, { postgres: { poolSize: 2 } })));
    const { rows } = await sql(url, 'SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r: { version: number }) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
    for (const s of stores) await s.close();
  });

  it('drops raw bytes on delivery and keeps them for dead letters', async () => {
    const url = await createTestDatabase('mailgate_store');
    const store = await openStore(url);
    await store.enqueue([input('r', 1), input('r', 2)]);
    const [a, b] = await store.claim('r', 2, 'w', 60_000);
    await store.markDelivered([a?.id ?? 0], { outcome: 'delivered' });
    await store.deadLetter(b?.id ?? 0, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' });
    await store.close();
    const { rows } = await sql(
      url,
      'SELECT status, EXISTS (SELECT 1 FROM outbox_raw r WHERE r.id = outbox.id) AS has_raw FROM outbox ORDER BY id',
    );
    expect(rows).toEqual([
      { status: 'delivered', has_raw: false },
      { status: 'dead', has_raw: true },
    ]);
  });

  it('upgrades a version 2 database in place, keeping queued, dead and delivered items', async () => {
    const url = await createTestDatabase('mailgate_store');
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await migratePostgres(
      pool,
      PG_MIGRATIONS.filter((m) => m.version <= 2),
    );
    await pool.end();
    const doc = (n: number) => ({ raw_email: { headers: { raw: `Subject: ${n}` }, body: { plain: `body ${n}` } }, comment_id: `c${n}` });
    const preview = { id: 'c1', timestamp: '2024-01-02T03:04:05Z', messages: [{ body: { text: 'hello' } }] };
    const warnings = [{ code: 'MAILGATE_WARN_NO_BODY', message: 'no body' }];
    const origin = (n: number) => ({ adapter: 'imap', account: 'a', folder: 'INBOX', uid: n });
    // Read in today's shape: the account is the instance, the kind's fields its details, the key its id.
    const read = (n: number) => ({ adapter: 'imap', instance: 'a', id: `k${n}`, details: { folder: 'INBOX', uid: n } });
    const rows: unknown[][] = [
      ['k1', 'c1', 'queued', null, null, origin(1), warnings, doc(1), preview, Buffer.from('raw 1'), true],
      [
        'k2',
        'c2',
        'dead',
        null,
        { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'bad' },
        origin(2),
        null,
        doc(2),
        null,
        Buffer.from('raw 2'),
        false,
      ],
      ['k3', 'c3', 'delivered', 'delivered', null, origin(3), null, doc(3), null, null, true],
      ['k4', 'c4', 'dead', null, { code: 'MAILGATE_ERR_MIME_TOO_LARGE', message: 'big' }, origin(4), null, doc(4), null, null, false],
    ];
    for (const [key, commentId, status, outcome, error, o, w, d, p, raw, due] of rows) {
      await sql(
        url,
        `INSERT INTO outbox (route, key, comment_id, status, finished_at, outcome, last_error, origin, warnings, document, preview, raw, action_due)
         VALUES ('r', $1, $2, $3, CASE WHEN $3 = 'queued' THEN NULL ELSE clock_timestamp() END, $4, $5::json, $6::json, $7::json, $8::json, $9::json, $10, $11)`,
        [
          key,
          commentId,
          status,
          outcome,
          JSON.stringify(error),
          JSON.stringify(o),
          JSON.stringify(w),
          JSON.stringify(d),
          JSON.stringify(p),
          raw,
          due,
        ],
      );
    }

    const store = await openStore(url);
    expect(await store.migrate()).toBe(Math.max(...PG_MIGRATIONS.map((m) => m.version)));
    expect(await store.outboxCounts()).toEqual([
      { route: 'r', status: 'dead', count: 2 },
      { route: 'r', status: 'delivered', count: 1 },
      { route: 'r', status: 'queued', count: 1 },
    ]);
    expect(await store.pendingActions(10)).toEqual([{ id: 3, route: 'r', origin: read(3) }]);
    const dead = await store.listDeadLetters({ limit: 10 });
    expect(dead.map((d) => [d.id, d.key, d.hasRaw, d.error.code])).toEqual([
      [2, 'k2', true, 'MAILGATE_ERR_BATCH_REJECTED'],
      [4, 'k4', false, 'MAILGATE_ERR_MIME_TOO_LARGE'],
    ]);
    const detail = await store.getDeadLetter(2);
    expect(detail?.raw?.toString()).toBe('raw 2');
    expect(detail?.document).toEqual(doc(2));
    expect((await store.getDeadLetter(4))?.raw).toBeUndefined();
    const [item] = await store.claim('r', 10, 'w', 60_000);
    expect(item).toMatchObject({ id: 1, key: 'k1', commentId: 'c1', document: doc(1), preview, warnings, origin: read(1) });
    expect(await store.markDelivered([1], { outcome: 'delivered' })).toBe(1);
    expect((await store.pendingActions(10)).map((a) => a.id)).toEqual([1, 3]);
    expect(await store.replayDeadLetter(2, input('r', 2, { key: 'k2' }))).toEqual({ id: 2, status: 'queued' });
    expect((await store.claim('r', 10, 'w', 60_000)).map((i) => i.key)).toEqual(['k2']);
    await store.close();
    const columns = await sql(url, `SELECT column_name FROM information_schema.columns WHERE table_name = 'outbox'`);
    expect(columns.rows.map((r: { column_name: string }) => r.column_name)).not.toContain('raw');
    expect(columns.rows.map((r: { column_name: string }) => r.column_name)).not.toContain('document');
    expect((await sql(url, 'SELECT id FROM outbox_raw ORDER BY id')).rows).toEqual([{ id: '2' }]);
  });

  it('array parameters built as literals reach the server element for element', async () => {
    const url = await createTestDatabase('mailgate_store');
    const texts = ['plain', '', 'NULL', 'a "quoted" word', 'back\\slash\\', '\\"', '{braces},commas', ' spaced ', 'ünï 🎉', '\t\r\n'];
    const at = new Date(Date.UTC(2024, 4, 14, 7, 30, 0, 123));
    const { rows } = await sql(url, 'SELECT $1::text[] AS t, $2::bigint[] AS n, $3::timestamptz[] AS d, $4::json[] AS j', [
      pgArray([...texts, null, undefined]),
      pgArray([1, 0, 2 ** 40]),
      pgArray([at, null]),
      pgArray([JSON.stringify(['a@example.com', 'say "hi" \\ bye'])]),
    ]);
    expect(rows[0]).toEqual({
      t: [...texts, null, null],
      n: ['1', '0', String(2 ** 40)],
      d: [at, null],
      j: [['a@example.com', 'say "hi" \\ bye']],
    });
    expect(pgArray([])).toBe('{}');
  });

  it('runs a transaction that keeps deadlocking again, up to six times, and gives up on other errors at once', async () => {
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    let calls = 0;
    // Three writers re-running together can meet again: five deadlocks in a row, then a commit.
    const result = await retryRolledBack(async () => {
      calls += 1;
      if (calls <= 5) throw deadlock;
      return 'committed';
    });
    expect([result, calls]).toEqual(['committed', 6]);
    calls = 0;
    await expect(
      retryRolledBack(async () => {
        calls += 1;
        throw deadlock;
      }),
    ).rejects.toBe(deadlock);
    expect(calls).toBe(6);
    calls = 0;
    const other = Object.assign(new Error('duplicate key'), { code: '23505' });
    await expect(
      retryRolledBack(async () => {
        calls += 1;
        throw other;
      }),
    ).rejects.toBe(other);
    expect(calls).toBe(1);
  });

  it('refuses a schema newer than it knows', async () => {
    const url = await createTestDatabase('mailgate_store');
    await (await openStore(url)).close();
    await sql(url, 'INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [PG_MIGRATIONS.length + 100, 'future']);
    await expectCode(openStore(url), 'MAILGATE_ERR_STORE_MIGRATION');
  });

  it('reports an unreachable server as unavailable', async () => {
    const port = await freePort();
    await expectCode(
      openStore(`postgres://postgres@127.0.0.1:${port}/none`, { postgres: { connectTimeoutMs: 2000 } }),
      'MAILGATE_ERR_STORE_UNAVAILABLE',
    );
  });

  it('rejects invalid pool options with a config error', async () => {
    await expectCode(openStore('postgresql://127.0.0.1/x', { postgres: { poolSize: 0 } }), 'MAILGATE_ERR_CONFIG_INVALID');
  });
});
