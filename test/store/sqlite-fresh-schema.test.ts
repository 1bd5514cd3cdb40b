/**
 * A new SQLite store is created from one schema text (src/store/sqlite/fresh-schema.ts) rather
 * than by running every migration: both ways must give the same schema, and a new store must
 * take the one-step way.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { FRESH_SCHEMA_VERSION } from '../../src/store/sqlite/fresh-schema.js';
import { migrateSqlite, SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from '../../src/store/sqlite/migrations.js';

interface SchemaRow {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** Every object of the schema, and the migrations recorded as applied. */
function schemaOf(db: Database.Database): { objects: SchemaRow[]; applied: Array<{ version: number; name: string }> } {
  return {
    objects: db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all() as SchemaRow[],
    applied: db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as Array<{ version: number; name: string }>,
  };
}

/** The rows of every table but the migration record: a migration that seeds rows must seed them on a new store too. */
function rowsOf(db: Database.Database): Record<string, unknown[]> {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'schema_migrations' ORDER BY name")
    .all() as Array<{ name: string }>;
  return Object.fromEntries(tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}"`).all()]));
}

/** The text fresh-schema.ts holds: what the migrations leave, in the order they created it. */
function schemaText(db: Database.Database): string {
  const rows = db
    .prepare(
      "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY rowid",
    )
    .all() as Array<{ sql: string }>;
  return rows.map((r) => `${r.sql};`).join('\n');
}

describe('SQLite: a new store gets its schema in one step', () => {
  it('is the schema the migrations leave, recorded as every migration applied', () => {
    // Through the migrations: a store at version 1 goes through all the others.
    const migrated = new Database(':memory:');
    migrateSqlite(
      migrated,
      SQLITE_MIGRATIONS.filter((m) => m.version === 1),
    );
    expect(migrateSqlite(migrated)).toBe(SQLITE_SCHEMA_VERSION);
    const fresh = new Database(':memory:');
    expect(migrateSqlite(fresh)).toBe(SQLITE_SCHEMA_VERSION);
    const paste = `src/store/sqlite/fresh-schema.ts must hold the migrations' schema (version ${SQLITE_SCHEMA_VERSION}):\n${schemaText(migrated)}\n`;
    expect(FRESH_SCHEMA_VERSION, paste).toBe(SQLITE_SCHEMA_VERSION);
    expect(schemaOf(fresh), paste).toEqual(schemaOf(migrated));
    expect(schemaOf(fresh).applied.map((m) => m.version)).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
    expect(rowsOf(fresh), 'a migration writes rows that the schema text does not').toEqual(rowsOf(migrated));
    migrated.close();
    fresh.close();
  });

  it('runs no migration on a new store, and they all on a store that has tables', () => {
    const statements: string[] = [];
    const fresh = new Database(':memory:', { verbose: (sql) => statements.push(String(sql)) });
    migrateSqlite(fresh);
    // The migrations rebuild tables and add and drop columns; the schema text creates them whole.
    expect(statements.filter((s) => /ALTER TABLE/i.test(s))).toEqual([]);
    fresh.close();

    statements.length = 0;
    const older = new Database(':memory:', { verbose: (sql) => statements.push(String(sql)) });
    older.exec('CREATE TABLE unrelated (x INTEGER)');
    migrateSqlite(older);
    expect(statements.some((s) => /ALTER TABLE outbox ADD COLUMN action_due/i.test(s))).toBe(true);
    expect(older.prepare('SELECT COUNT(*) AS n FROM unrelated').get()).toEqual({ n: 0 });
    older.close();
  });
});
