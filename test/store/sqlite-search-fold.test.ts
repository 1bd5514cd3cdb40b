/**
 * SQLite's search rows written at enqueue and indexed later (docs/store.md, "Search rows"): an
 * item enqueued and not yet folded is found by every read of the console's search table, keeps
 * its thread in the index, and goes with its item; a replayed dead letter is found by its new
 * fields; a fold that fails part-way moves nothing.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { FOLD_BATCH } from '../../src/store/sqlite/staged.js';
import type { OutboxInput } from '../../src/store/types.js';
import { input } from '../contract/store.case.js';
import { freshStores, stagedCounts } from './staged-rows.js';

const withStore = freshStores('mailgate-search-fold-');

/** An item with its facts (as intake hands them over) and a thread entry dated `threadTs`. */
function item(i: number, subject: string, extra: Partial<OutboxInput> = {}): OutboxInput {
  const base = input('r', i);
  return {
    ...base,
    facts: {
      sender: `Sender${i}@Example.com`,
      senderName: `Sender ${i}`,
      subject,
      messageId: `m${i}@example.com`,
      timestamp: 1_700_000_000_000,
    },
    thread: {
      source: 'acme/s',
      entry: { commentId: base.commentId, threadId: `t${i}`, timestamp: '2020-01-01T00:00:00.000Z', participants: ['a@example.com'] },
    },
    ...extra,
  };
}

/** Rows in the indexed search table and waiting to be folded. */
const rows = (path: string) => stagedCounts(path, 'outbox_search', 'outbox_search_new');

describe('SQLite search rows folded after enqueue', () => {
  it('finds items enqueued and not yet folded in a search, by comment id and in the counts', async () => {
    await withStore(async (store, path) => {
      await store.enqueue([item(1, 'Invoice March'), item(2, 'Invoice April'), item(3, 'Refund')]);
      expect(rows(path)).toEqual({ indexed: 0, waiting: 3 });
      const found = await store.listItems({ q: 'invoice', limit: 10 });
      expect(found.map((i) => [i.subject, i.sender, i.senderName, i.messageId])).toEqual([
        ['Invoice April', 'Sender2@Example.com', 'Sender 2', 'm2@example.com'],
        ['Invoice March', 'Sender1@Example.com', 'Sender 1', 'm1@example.com'],
      ]);
      expect(rows(path)).toEqual({ indexed: 3, waiting: 0 });
      // Each read folds first: a list, a lookup by comment id, the counts.
      await store.enqueue([item(4, 'Late arrival')]);
      expect((await store.listItems({ limit: 10 }))[0]?.subject).toBe('Late arrival');
      await store.enqueue([item(5, 'Later still')]);
      const c5 = input('r', 5).commentId;
      expect(await store.itemsByComment('r', [c5.toUpperCase()])).toEqual(new Map([[c5, 5]]));
      await store.enqueue([item(6, 'Last')]);
      expect(await store.itemCounts()).toEqual([{ route: 'r', adapter: 'files', state: 'queued', count: 6 }]);
      expect(rows(path)).toEqual({ indexed: 6, waiting: 0 });
    });
  });

  it('folds in transactions of the size asked, oldest first, and says how many', async () => {
    await withStore(async (store, path) => {
      await store.enqueue(Array.from({ length: 5 }, (_, i) => item(i + 1, `s${i + 1}`)));
      expect(await store.foldSearches(2)).toBe(2);
      expect(rows(path)).toEqual({ indexed: 2, waiting: 3 });
      expect(await store.foldSearches(10)).toBe(3);
      expect(await store.foldSearches(10)).toBe(0);
      expect((await store.listItems({ q: 's', limit: 10 })).map((i) => i.subject)).toEqual(['s5', 's4', 's3', 's2', 's1']);
    });
  });

  it('keeps the thread of an item not yet folded when pruning the thread index', async () => {
    await withStore(async (store, path) => {
      await store.enqueue([item(1, 'old thread')]);
      expect(rows(path).waiting).toBe(1);
      expect(await store.pruneThreads(new Date(), 100)).toEqual({ deleted: 0, next: null });
      expect((await store.threadMembers('acme/s', ['t1'])).get('t1')).toHaveLength(1);
    });
  });

  it('drops the waiting row with its item, and a replayed dead letter is found by its new fields', async () => {
    await withStore(async (store, path) => {
      const error = { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'bad' };
      await store.enqueue([item(1, 'first try', { error }), item(2, 'purged', { error })]);
      expect(await store.purgeDeadLetters({ ids: [2] })).toBe(1);
      expect(rows(path)).toEqual({ indexed: 0, waiting: 1 });
      expect((await store.listItems({ q: 'first', limit: 10 })).map((i) => i.id)).toEqual([1]);
      // Replayed once folded, and again before the next fold: the last replacement's fields.
      await store.replayDeadLetter(1, item(1, 'second try'));
      await store.deadLetter(1, error);
      await store.replayDeadLetter(1, item(1, 'third try'));
      expect(await store.listItems({ q: 'first', limit: 10 })).toEqual([]);
      expect(await store.listItems({ q: 'second', limit: 10 })).toEqual([]);
      expect((await store.listItems({ q: 'third', limit: 10 })).map((i) => i.id)).toEqual([1]);
      expect(rows(path)).toEqual({ indexed: 1, waiting: 0 });
    });
  });

  it('moves nothing when a fold fails part-way: each row stays in one of the two tables', async () => {
    await withStore(async (store, path) => {
      await store.enqueue(Array.from({ length: 10 }, (_, i) => item(i + 1, `subject ${i + 1}`)));
      // A fault on the 7th row's insert into the indexed table, after six went in.
      const side = new Database(path);
      side.exec(`CREATE TRIGGER fail_fold BEFORE INSERT ON outbox_search WHEN NEW.id = 7 BEGIN SELECT RAISE(ABORT, 'disk fault'); END`);
      await expect(store.foldSearches(10)).rejects.toThrow('disk fault');
      expect(rows(path)).toEqual({ indexed: 0, waiting: 10 });
      side.exec('DROP TRIGGER fail_fold');
      side.close();
      expect(await store.foldSearches(10)).toBe(10);
      expect(rows(path)).toEqual({ indexed: 10, waiting: 0 });
      expect(await store.listItems({ q: 'subject', limit: 20 })).toHaveLength(10);
    });
  });

  it('folds a large backlog for a read one transaction at a time, the event loop free in between', async () => {
    await withStore(async (store, path) => {
      const total = 2 * FOLD_BATCH + 10;
      for (let i = 0; i < total; i += 500) {
        await store.enqueue(Array.from({ length: Math.min(500, total - i) }, (_, k) => item(i + k + 1, `subject ${i + k}`)));
      }
      expect(rows(path)).toEqual({ indexed: 0, waiting: total });
      // A callback queued before the read runs between two of its fold's transactions.
      let between: { indexed: number; waiting: number } | undefined;
      setImmediate(() => (between = rows(path)));
      expect(await store.listItems({ q: 'subject', limit: 5 })).toHaveLength(5);
      expect(between).toEqual({ indexed: FOLD_BATCH, waiting: total - FOLD_BATCH });
      expect(rows(path)).toEqual({ indexed: total, waiting: 0 });
    });
  });
});
