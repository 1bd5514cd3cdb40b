import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { expectCode, input, storeContract } from '../contract/store.case.js';
import { createTestDatabase, freePort, stopTestServer } from '../support/postgres.js';

afterAll(stopTestServer);

storeContract('postgres', async () => {
  const url = await createTestDatabase('mailgate_store');
  return { open: () => openStore(url, { postgres: { poolSize: 4 } }) };
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
    const { rows } = await sql(url, 'SELECT status, raw IS NOT NULL AS has_raw FROM outbox ORDER BY id');
    expect(rows).toEqual([{ status: 'delivered', has_raw: false }, { status: 'dead', has_raw: true }]);
  });

  it('refuses a schema newer than it knows', async () => {
    const url = await createTestDatabase('mailgate_store');
    await (await openStore(url)).close();
    await sql(url, 'INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [PG_MIGRATIONS.length + 100, 'future']);
    await expectCode(openStore(url), 'MAILGATE_ERR_STORE_MIGRATION');
  });

  it('reports an unreachable server as unavailable', async () => {
    const port = await freePort();
    await expectCode(openStore(`postgres://postgres@127.0.0.1:${port}/none`, { postgres: { connectTimeoutMs: 2000 } }), 'MAILGATE_ERR_STORE_UNAVAILABLE');
  });

  it('rejects invalid pool options with a config error', async () => {
    await expectCode(openStore('postgresql://127.0.0.1/x', { postgres: { poolSize: 0 } }), 'MAILGATE_ERR_CONFIG_INVALID');
  });
});
