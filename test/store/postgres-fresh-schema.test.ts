/**
 * A new PostgreSQL database is created from one schema text (src/store/postgres/fresh-schema.ts)
 * rather than by running every migration: both ways must give the same schema, and a new
 * database must take the one-step way.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { FRESH_SCHEMA_VERSION } from '../../src/store/postgres/fresh-schema.js';
import { migratePostgres, PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { createTestDatabase, stopTestServer } from '../support/postgres.js';

afterAll(stopTestServer);

/** Every object of the public schema as the catalogue describes it, and the migrations recorded as applied. */
async function schemaOf(db: pg.Pool): Promise<Record<string, unknown[]>> {
  const q = async (text: string) => (await db.query(text)).rows;
  return {
    tables: await q(`SELECT c.relname, c.relkind, c.relpersistence, c.reloptions FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'S') ORDER BY c.relname`),
    // Columns in their order (a dropped column leaves a gap in attnum, not in this order).
    columns: await q(`SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull, a.attidentity,
        a.attcompression, co.collname, pg_get_expr(d.adbin, d.adrelid) AS default,
        row_number() OVER (PARTITION BY c.relname ORDER BY a.attnum) AS position
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> 100
      WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum`),
    constraints: await q(`SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) AS def FROM pg_constraint k
      JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' ORDER BY c.relname, k.conname`),
    indexes: await q(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname`),
    sequences: await q(`SELECT sequencename, data_type, start_value, increment_by FROM pg_sequences
      WHERE schemaname = 'public' ORDER BY sequencename`),
    applied: await q('SELECT version, name FROM schema_migrations ORDER BY version'),
  };
}

/** The rows of every table but the migration record: a migration that seeds rows must seed them in a new database too. */
async function rowsOf(db: pg.Pool): Promise<Record<string, unknown[]>> {
  const { rows } = await db.query<{ tablename: string }>(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations' ORDER BY tablename",
  );
  const out: Record<string, unknown[]> = {};
  for (const { tablename } of rows) out[tablename] = (await db.query(`SELECT * FROM "${tablename}"`)).rows;
  return out;
}

/** A pool on a new database, and the statements it was sent. */
async function newDatabase(): Promise<{ pool: pg.Pool; statements: string[] }> {
  const pool = new pg.Pool({ connectionString: await createTestDatabase('mailgate_fresh'), max: 1 });
  const statements: string[] = [];
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0];
      statements.push(typeof first === 'string' ? first : String((first as { text?: string }).text));
      return query(...args);
    };
  });
  return { pool, statements };
}

describe('PostgreSQL: a new database gets its schema in one step', () => {
  it('is the schema the migrations leave, recorded as every migration applied', async () => {
    // Through the migrations: a database at version 1 goes through all the others.
    const migrated = await newDatabase();
    await migratePostgres(
      migrated.pool,
      PG_MIGRATIONS.filter((m) => m.version === 1),
    );
    expect(await migratePostgres(migrated.pool)).toBe(FRESH_SCHEMA_VERSION);
    const fresh = await newDatabase();
    expect(await migratePostgres(fresh.pool)).toBe(FRESH_SCHEMA_VERSION);
    const note = `src/store/postgres/fresh-schema.ts must create the migrations' schema (version ${Math.max(...PG_MIGRATIONS.map((m) => m.version))})`;
    expect(FRESH_SCHEMA_VERSION, note).toBe(Math.max(...PG_MIGRATIONS.map((m) => m.version)));
    expect(await schemaOf(fresh.pool), note).toEqual(await schemaOf(migrated.pool));
    expect((await schemaOf(fresh.pool)).applied).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    expect(await rowsOf(fresh.pool), 'a migration writes rows that the schema text does not').toEqual(await rowsOf(migrated.pool));
    await migrated.pool.end();
    await fresh.pool.end();
  });

  it('runs no migration on a new database, and the missing ones on a database at an older version', async () => {
    const fresh = await newDatabase();
    await migratePostgres(fresh.pool);
    // The migrations move and drop columns, foreign keys and an index; the schema text creates the tables whole.
    expect(fresh.statements.filter((s) => /ALTER TABLE \w+ (DROP|ADD|SET)|DROP INDEX/i.test(s))).toEqual([]);
    expect(fresh.statements.filter((s) => /CREATE TABLE outbox \(/.test(s))).toHaveLength(1);
    await fresh.pool.end();

    const older = await newDatabase();
    await migratePostgres(
      older.pool,
      PG_MIGRATIONS.filter((m) => m.version <= 2),
    );
    older.statements.length = 0;
    expect(await migratePostgres(older.pool)).toBe(FRESH_SCHEMA_VERSION);
    expect(older.statements.some((s) => /ALTER TABLE outbox DROP COLUMN document/i.test(s))).toBe(true);
    await older.pool.end();
  });
});
