/**
 * Light writes on SQLite (src/store/sqlite/light.ts): what a power cut may take back without harm
 * — retention's batches, the folds of search rows and thread index entries, parse-attempt counts — commits without syncing
 * the WAL on the event loop (synchronous=NORMAL for that transaction alone), and the store's own
 * FULL level is back for every other commit. Each write's level is read inside its transaction,
 * by TEMP triggers on the store's own connection (`pragma_synchronous`: 2 = FULL, 1 = NORMAL).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { SqliteConsole } from '../../src/store/sqlite/console.js';
import { LightWrites } from '../../src/store/sqlite/light.js';
import { SqliteMaintenance } from '../../src/store/sqlite/maintenance.js';
import { migrateSqlite } from '../../src/store/sqlite/migrations.js';
import { SqliteThreads } from '../../src/store/sqlite/threads.js';
import { input } from '../contract/store.case.js';

const dir = mkdtempSync(join(tmpdir(), 'mailgate-light-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = (): string => join(dir, `store-${(n += 1)}.db`);

const FULL = 2;
const NORMAL = 1;
const level = (db: Database.Database): number => db.pragma('synchronous', { simple: true }) as number;

/** Records, per table written, the synchronous level each write ran under. */
function recordLevels(db: Database.Database, writes: Array<[table: string, event: 'INSERT' | 'DELETE']>): () => Record<string, number[]> {
  db.exec('CREATE TEMP TABLE seen_levels (tbl TEXT, level INTEGER)');
  for (const [table, event] of writes) {
    db.exec(`CREATE TEMP TRIGGER seen_${table} AFTER ${event} ON main.${table}
      BEGIN INSERT INTO seen_levels SELECT '${table}', synchronous FROM pragma_synchronous; END`);
  }
  return () => {
    const out: Record<string, number[]> = {};
    for (const r of db.prepare('SELECT tbl, level FROM seen_levels').all() as Array<{ tbl: string; level: number }>) {
      (out[r.tbl] ??= []).push(r.level);
    }
    for (const k of Object.keys(out)) out[k] = [...new Set(out[k])];
    return out;
  };
}

describe('LightWrites', () => {
  it('runs a transaction under NORMAL from its first call on, and gives the store its FULL level back', () => {
    const db = new Database(freshPath());
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec('CREATE TABLE t (a)');
      const light = new LightWrites(db, 'FULL');
      const write = db.transaction((a: number) => {
        db.prepare('INSERT INTO t VALUES (?)').run(a);
        return level(db);
      });
      expect(light.run(write, 1)).toBe(NORMAL);
      expect(level(db)).toBe(FULL);
      expect(light.run(write, 2)).toBe(NORMAL);
      expect(level(db)).toBe(FULL);
      // A failed transaction too.
      const failing = db.transaction(() => {
        throw new Error('no');
      });
      expect(() => light.run(failing)).toThrow('no');
      expect(level(db)).toBe(FULL);
      // Inside a transaction of the caller's: a savepoint, whose commit (and level) is the caller's.
      const outer = db.transaction(() => light.run(write, 3));
      expect(outer.immediate()).toBe(FULL);
      expect(db.prepare('SELECT COUNT(*) FROM t').pluck().get()).toBe(3);
    } finally {
      db.close();
    }
  });

  it('leaves a NORMAL store as it is', () => {
    const db = new Database(freshPath());
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const light = new LightWrites(db, 'NORMAL');
      expect(light.run(db.transaction(() => level(db)))).toBe(NORMAL);
      expect(level(db)).toBe(NORMAL);
    } finally {
      db.close();
    }
  });
});

describe('SQLite retention and folds write lightly', () => {
  it('prunes items, threads and checkpoints and folds search rows and thread index entries without a synced commit', async () => {
    const path = freshPath();
    const store = await openStore(`sqlite:${path}`);
    const items = [1, 2, 3].map((i) =>
      input('r', i, {
        facts: {
          sender: `s${i}@example.com`,
          senderName: `S ${i}`,
          subject: `subject ${i}`,
          messageId: `m${i}@example.com`,
          timestamp: 1_700_000_000_000,
        },
        thread: {
          source: 'acme/s',
          entry: { commentId: (0xc0de0000 + i).toString(16), threadId: `t${i}`, timestamp: '2020-01-01T00:00:00.000Z', participants: [] },
        },
      }),
    );
    await store.enqueue(items);
    const claimed = await store.claim('r', 10, 'w', 60_000);
    await store.markDelivered(
      claimed.map((c) => c.id),
      { outcome: 'delivered' },
    );
    await store.setCheckpoint('wake:old', { at: 1 });
    await store.close();

    // The store's parts on a connection of the test's own, as openStore builds them.
    const db = new Database(path);
    try {
      db.pragma('synchronous = FULL');
      migrateSqlite(db);
      const light = new LightWrites(db, 'FULL');
      const search = new SqliteConsole(db, Date.now, light);
      const maintenance = new SqliteMaintenance(db, search, new SqliteThreads(db, light), light);
      const seen = recordLevels(db, [
        ['outbox_search', 'INSERT'],
        ['threads_new', 'DELETE'],
        ['outbox', 'DELETE'],
        ['threads', 'DELETE'],
        ['checkpoints', 'DELETE'],
      ]);
      const later = new Date(Date.now() + 86_400_000);
      expect(maintenance.foldSearches(100)).toBe(3);
      expect(maintenance.foldThreads(100)).toBe(3);
      expect(maintenance.pruneBatch('delivered', later, 100)).toBe(3);
      expect(maintenance.pruneThreads(later, 100).deleted).toBe(3);
      expect(maintenance.pruneCheckpoints('wake:', later, 100)).toBe(1);
      expect(seen()).toEqual({
        outbox_search: [NORMAL],
        threads_new: [NORMAL],
        outbox: [NORMAL],
        threads: [NORMAL],
        checkpoints: [NORMAL],
      });
      expect(level(db)).toBe(FULL);
    } finally {
      db.close();
    }
  });
});
