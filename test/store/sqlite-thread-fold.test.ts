/**
 * SQLite's thread index entries written at enqueue and indexed later (docs/store.md, "Thread
 * index entries folded later"): an entry not yet folded is read by the thread index's reads and
 * counted by its pruning, the last entry given for a comment wins across folds as it did when
 * each was indexed at once, a retention round folds them, and a fold that fails part-way moves
 * nothing.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config/schema.js';
import { createLogger } from '../../src/logger.js';
import { createRetention } from '../../src/pipeline/retention.js';
import { FOLD_BATCH } from '../../src/store/sqlite/staged.js';
import type { OutboxInput, Store, ThreadEntry } from '../../src/store/types.js';
import { input } from '../contract/store.case.js';
import { freshStores, stagedCounts } from './staged-rows.js';

const withStore = freshStores('mailgate-thread-fold-');

const entry = (commentId: string, threadId: string, timestamp: string, from?: string): ThreadEntry => ({
  commentId,
  threadId,
  timestamp,
  participants: ['a@example.com'],
  ...(from === undefined ? {} : { from }),
});

/** An item carrying its thread index entry in thread `threadId`, dated `timestamp`. */
function item(i: number, threadId: string, timestamp = '2020-01-01T00:00:00.000Z'): OutboxInput {
  const base = input('r', i);
  return { ...base, thread: { source: 'acme/s', entry: entry(base.commentId, threadId, timestamp) } };
}

/** Entries in the thread index and waiting to be folded. */
const rows = (path: string) => stagedCounts(path, 'threads', 'threads_new');

const members = async (store: Store, threadId: string) =>
  ((await store.threadMembers('acme/s', [threadId])).get(threadId) ?? []).map((e) => [e.commentId, e.timestamp, e.from ?? null]);

describe('SQLite thread index entries folded after enqueue', () => {
  it('reads entries enqueued and not yet folded, beside those folded before', async () => {
    await withStore(async (store, path) => {
      await store.enqueue([item(1, 't1', '2020-01-01T00:00:00.000Z'), item(2, 't1', '2020-01-02T00:00:00.000Z'), item(3, 't3')]);
      expect(rows(path)).toEqual({ indexed: 0, waiting: 3 });
      expect((await members(store, 't1')).map(([c]) => c)).toEqual([input('r', 1).commentId, input('r', 2).commentId]);
      expect(rows(path)).toEqual({ indexed: 3, waiting: 0 });
      // One more of the thread, waiting while the others are folded: the read finds all three.
      await store.enqueue([item(4, 't1', '2020-01-03T00:00:00.000Z')]);
      expect(rows(path)).toEqual({ indexed: 3, waiting: 1 });
      expect(await members(store, 't1')).toHaveLength(3);
      expect(rows(path)).toEqual({ indexed: 4, waiting: 0 });
    });
  });

  it('keeps the last entry given for a comment, whether the earlier one was folded or still waits', async () => {
    await withStore(async (store, path) => {
      await store.indexThread('acme/s', [entry('c1', 't1', '2020-01-01T00:00:00.000Z', 'first@example.com')]);
      expect(await store.foldThreads(10)).toBe(1);
      // Two more for the same comment, both waiting: the later one wins over both.
      await store.indexThread('acme/s', [entry('c1', 't1', '2020-01-02T00:00:00.000Z', 'second@example.com')]);
      await store.indexThread('acme/s', [entry('c1', 't1', '2020-01-03T00:00:00.000Z', 'third@example.com')]);
      expect(rows(path)).toEqual({ indexed: 1, waiting: 2 });
      expect(await members(store, 't1')).toEqual([['c1', '2020-01-03T00:00:00.000Z', 'third@example.com']]);
      // A comment moved to another thread leaves its first one.
      await store.indexThread('acme/s', [entry('c1', 't2', '2020-01-04T00:00:00.000Z')]);
      expect(await members(store, 't1')).toEqual([]);
      expect(await members(store, 't2')).toEqual([['c1', '2020-01-04T00:00:00.000Z', null]]);
      expect(rows(path)).toEqual({ indexed: 1, waiting: 0 });
    });
  });

  it('folds in transactions of the size asked, oldest first, and says how many', async () => {
    await withStore(async (store, path) => {
      await store.enqueue(Array.from({ length: 5 }, (_, i) => item(i + 1, `t${i + 1}`)));
      expect(await store.foldThreads(2)).toBe(2);
      expect(rows(path)).toEqual({ indexed: 2, waiting: 3 });
      expect(await store.foldThreads(10)).toBe(3);
      expect(await store.foldThreads(10)).toBe(0);
      expect(rows(path)).toEqual({ indexed: 5, waiting: 0 });
    });
  });

  it("counts a thread's waiting entries when pruning: a recent message not yet folded keeps its old thread", async () => {
    await withStore(async (store, path) => {
      // An old thread with no item left (its entry written alone), folded.
      await store.indexThread('acme/s', [entry('c1', 't1', '2020-01-01T00:00:00.000Z')]);
      await store.foldThreads(10);
      // A reply dated now, still waiting: the thread's newest message is recent.
      await store.indexThread('acme/s', [entry('c2', 't1', new Date().toISOString())]);
      expect(rows(path)).toEqual({ indexed: 1, waiting: 1 });
      expect(await store.pruneThreads(new Date(Date.now() - 86_400_000), 100)).toEqual({ deleted: 0, next: null });
      expect((await members(store, 't1')).map(([c]) => c)).toEqual(['c1', 'c2']);
    });
  });

  it("folds them in a retention round, before the thread index's pruning", async () => {
    await withStore(async (store, path) => {
      await store.enqueue(Array.from({ length: 7 }, (_, i) => item(i + 1, `t${i + 1}`, new Date().toISOString())));
      const config = ConfigSchema.parse({ routes: [{ name: 'r', source: 'acme/s' }], retention: { threads_s: null } });
      const retention = createRetention({ store, retention: config.retention, logger: createLogger({ level: 'silent' }) });
      expect((await retention.runOnce()).threadRows).toBe(7);
      expect(rows(path)).toEqual({ indexed: 7, waiting: 0 });
      expect((await retention.runOnce()).threadRows).toBe(0);
    });
  });

  it('moves nothing when a fold fails part-way: each entry stays in one of the two tables', async () => {
    await withStore(async (store, path) => {
      await store.enqueue(Array.from({ length: 10 }, (_, i) => item(i + 1, `t${i + 1}`)));
      // A fault on the 7th entry's insert into the index, after six went in.
      const side = new Database(path);
      side.exec(`CREATE TRIGGER fail_fold BEFORE INSERT ON threads WHEN NEW.thread_id = 't7' BEGIN SELECT RAISE(ABORT, 'disk fault'); END`);
      await expect(store.foldThreads(10)).rejects.toThrow('disk fault');
      expect(rows(path)).toEqual({ indexed: 0, waiting: 10 });
      side.exec('DROP TRIGGER fail_fold');
      side.close();
      expect(await store.foldThreads(10)).toBe(10);
      expect(rows(path)).toEqual({ indexed: 10, waiting: 0 });
    });
  });

  it('folds a large backlog for a read one transaction at a time, the event loop free in between', async () => {
    await withStore(async (store, path) => {
      const total = 2 * FOLD_BATCH + 10;
      for (let i = 0; i < total; i += 500) {
        await store.enqueue(Array.from({ length: Math.min(500, total - i) }, (_, k) => item(i + k + 1, 'big')));
      }
      expect(rows(path)).toEqual({ indexed: 0, waiting: total });
      // A callback queued before the read runs between two of its fold's transactions.
      let between: { indexed: number; waiting: number } | undefined;
      setImmediate(() => (between = rows(path)));
      expect(await members(store, 'big')).toHaveLength(total);
      expect(between).toEqual({ indexed: FOLD_BATCH, waiting: total - FOLD_BATCH });
      expect(rows(path)).toEqual({ indexed: total, waiting: 0 });
    });
  });
});
