/**
 * The SQLite store's many-rows insert: every row written once, in order, whatever the count
 * (the statements of 64, 32, …, 1 rows it splits a batch into), so an upsert keeps the later
 * of two rows for a key even when they fall in different statements.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MultiRowInsert } from '../../src/store/sqlite/multi-row.js';

function table(): Database.Database {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL, n INTEGER)');
  return db;
}

const upsert = (db: Database.Database) =>
  new MultiRowInsert(db, 'INSERT INTO t (k, v, n)', 'ON CONFLICT (k) DO UPDATE SET v = excluded.v, n = excluded.n', 3);

describe('SQLite many-rows insert', () => {
  it('writes every row of any count, values as bound', () => {
    for (const count of [0, 1, 2, 63, 64, 65, 131, 500]) {
      const db = table();
      upsert(db).run(Array.from({ length: count }, (_, i) => [i, `v${i}\ud800`, i % 3 === 0 ? null : i * 1.5]));
      const rows = db.prepare('SELECT k, v, n FROM t ORDER BY k').all() as Array<{ k: number; v: string; n: number | null }>;
      expect(rows.length).toBe(count);
      expect(rows.every((r, i) => r.k === i && r.v === `v${i}\ufffd` && r.n === (i % 3 === 0 ? null : i * 1.5))).toBe(true);
    }
  });

  it('keeps the later row of a key given twice, also across statements (upsert order)', () => {
    const db = table();
    // 100 rows go as 64 + 32 + 4: key 7 appears in the first statement and in the last.
    const rows = Array.from({ length: 100 }, (_, i) => [i === 98 ? 7 : i, `v${i}`, i]);
    upsert(db).run(rows);
    expect(db.prepare('SELECT v FROM t WHERE k = 7').get()).toEqual({ v: 'v98' });
    expect((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n).toBe(99);
  });

  it('refuses a row of the wrong width', () => {
    expect(() => upsert(table()).run([[1, 'a']])).toThrow(/2 values, not 3/);
  });
});
