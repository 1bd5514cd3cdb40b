/**
 * Statements compiled once per connection. better-sqlite3 compiles SQL on every `prepare`, which
 * costs more than running a small statement; the store's methods ask for theirs here instead, by
 * their SQL text, and get the compiled statement back from the second call on. SQLite recompiles
 * a cached statement by itself when the schema changes under it (a migration).
 */
import type Database from 'better-sqlite3';

/**
 * Most statements kept per connection. The store's SQL texts are a fixed set (a few hundred with
 * the console's filter combinations); past this the cache starts again rather than grow.
 */
export const MAX_CACHED_STATEMENTS = 512;

const caches = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * `db.prepare(sql)`, compiled once per connection. The statement is shared by every caller of the
 * same SQL: never change its mode (`pluck`, `raw`, `expand`, `safeIntegers`); prepare one of your
 * own for that.
 */
export function statement(db: Database.Database, sql: string): Database.Statement {
  let cache = caches.get(db);
  if (cache === undefined) caches.set(db, (cache = new Map()));
  let st = cache.get(sql);
  if (st === undefined) {
    st = db.prepare(sql);
    if (cache.size >= MAX_CACHED_STATEMENTS) cache.clear();
    cache.set(sql, st);
  }
  return st;
}
