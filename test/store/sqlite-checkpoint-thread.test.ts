/**
 * The thread a SQLite store's checkpoint rounds copy the WAL on (src/store/sqlite/wal-rounds.ts
 * step 3): its own connection copies the frames other connections wrote into the database file,
 * one PASSIVE checkpoint per call, and once closed it refuses rather than hanging.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckpointThread } from '../../src/store/sqlite/checkpoint-thread.js';

let dir: string;
let path: string;
let db: Database.Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-checkpoint-thread-'));
  path = join(dir, 's.db');
  db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (v TEXT)');
});
afterEach(() => {
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

const frames = (): { log: number; checkpointed: number } =>
  (db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>)[0]!;

describe('the checkpoint thread of a SQLite store', () => {
  it('copies every frame another connection wrote into the database file, on each call', async () => {
    const thread = new CheckpointThread(path);
    try {
      const before = statSync(path).size;
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      for (let i = 0; i < 200; i++) insert.run('x'.repeat(4_000));
      const first = await thread.checkpoint();
      expect(first.log).toBeGreaterThan(100);
      expect(first.checkpointed).toBe(first.log);
      expect(statSync(path).size).toBeGreaterThan(before + 200 * 4_000);
      for (let i = 0; i < 50; i++) insert.run('y'.repeat(4_000));
      const second = await thread.checkpoint();
      expect(second.checkpointed).toBe(second.log);
      // The writer started the WAL over (everything was copied): it holds the new frames only.
      expect(second.log).toBeGreaterThan(30);
      // Nothing left for the writer's connection to copy.
      const left = frames();
      expect(left.checkpointed).toBe(left.log);
    } finally {
      await thread.close();
    }
    expect((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(250);
  });

  it('refuses a checkpoint once closed, and says it can no longer checkpoint', async () => {
    const thread = new CheckpointThread(path);
    expect(thread.alive).toBe(true);
    await thread.close();
    expect(thread.alive).toBe(false);
    await expect(thread.checkpoint()).rejects.toThrow(/checkpoint thread exited/);
  });
});
