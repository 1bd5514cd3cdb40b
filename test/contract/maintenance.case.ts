/**
 * Contract cases for retention: pruning by age in batches (delivered, dead, predictions, parse
 * attempt counts), what
 * goes with a pruned item and what stays (the ledger), the store's size and oldest items.
 */
import { describe, expect, it } from 'vitest';
import type { ThreadCursor } from '../../src/store/types.js';
import { fakeClock, input, type ContractContext } from './store.case.js';

const LATER = () => new Date(Date.now() + 60_000);
const EARLIER = () => new Date(Date.now() - 3_600_000);

export function maintenanceCases(ctx: ContractContext): void {
  describe('retention', () => {
    it('prunes delivered items oldest first, a batch at a time, with their side rows; keeps queued, dead and due actions', async () => {
      const s = ctx.store();
      await s.enqueue([1, 2, 3, 4, 5].map((n) => input('r', n, { aliases: [`alias-${n}`] })));
      await s.enqueue([input('r', 6, { afterDelivery: true }), input('r', 7), input('r', 8)]);
      const items = await s.claim('r', 8, 'w', 60_000);
      const [i1, i2, i3, i4, i5, i6, i7] = items.map((i) => i.id);
      // One at a time, so that their delivery times are in this order.
      for (const id of [i1!, i2!, i3!, i4!, i5!, i6!]) await s.markDelivered([id], { outcome: 'delivered' });
      await s.deadLetter(i7!, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' });

      expect(await s.pruneBatch('delivered', EARLIER(), 10)).toBe(0);
      expect(await s.pruneBatch('delivered', LATER(), 2)).toBe(2);
      expect(await s.getItem(i1!)).toBeUndefined();
      expect(await s.getItem(i2!)).toBeUndefined();
      expect(await s.itemAttempts(i1!)).toEqual([]);
      expect((await s.getItem(i3!))?.status).toBe('delivered');
      // The rest: fewer than the limit means nothing more is left.
      expect(await s.pruneBatch('delivered', LATER(), 10)).toBe(3);
      expect(await s.pruneBatch('delivered', LATER(), 10)).toBe(0);
      // The item whose after-delivery action is due, the dead letter and the queued one stay.
      expect((await s.getItem(i6!))?.status).toBe('delivered');
      expect((await s.getItem(i7!))?.status).toBe('dead');
      expect(await s.outboxDepth('r')).toBe(1);
      // A pruned item's key and aliases are forgotten: the message may be stored again.
      expect(await s.knownKeys('r', [input('r', 1).key, input('r', 8).key])).toEqual(new Set([input('r', 8).key]));
      expect((await s.findKeys('r', ['alias-1', 'alias-5'])).size).toBe(0);
      expect((await s.enqueue([input('r', 1)])).queued).toBe(1);
    });

    it('keeps the ledger: a pruned message stays known to it', async () => {
      const s = ctx.store();
      await s.enqueue([input('r', 1)]);
      const [item] = await s.claim('r', 1, 'w', 60_000);
      const entries = [
        { commentId: item!.commentId, textHash: 't1', docHash: 'd1', outcome: 'delivered' as const, updatedAt: new Date().toISOString() },
      ];
      await s.markDelivered([item!.id], { outcome: 'delivered', ledger: [{ source: 'acme/emails', entries }] });
      expect(await s.pruneBatch('delivered', LATER(), 10)).toBe(1);
      const known = await s.lookup('acme/emails', [item!.commentId]);
      expect(known.get(item!.commentId)?.textHash).toBe('t1');
    });

    it('prunes dead letters only when asked, by the time they died', async () => {
      const s = ctx.store();
      await s.enqueue([input('r', 1), input('r', 2)]);
      const [a, b] = await s.claim('r', 2, 'w', 60_000);
      await s.deadLetter(a!.id, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' });
      await s.markDelivered([b!.id], { outcome: 'delivered' });
      expect(await s.pruneBatch('dead', EARLIER(), 10)).toBe(0);
      expect(await s.pruneBatch('dead', LATER(), 10)).toBe(1);
      expect(await s.getDeadLetter(a!.id)).toBeUndefined();
      expect((await s.getItem(b!.id))?.status).toBe('delivered');
    });

    it('prunes predictions by age', async () => {
      const s = ctx.store();
      const model = { version: 1, time: '2026-01-01T00:00:00Z' };
      await s.savePredictions('r', [
        { commentId: 'aa', key: 'k1', predictions: [], model },
        { commentId: 'bb', key: 'k2', predictions: [], model },
      ]);
      expect(await s.pruneBatch('predictions', EARLIER(), 10)).toBe(0);
      expect(await s.pruneBatch('predictions', LATER(), 1)).toBe(1);
      expect(await s.pruneBatch('predictions', LATER(), 10)).toBe(1);
      expect(await s.listPredictions({ limit: 10 })).toEqual([]);
    });

    it('prunes parse-attempt counts by when they were last counted, a batch at a time (a count left behind is not kept for good)', async () => {
      const DAY = 86_400_000;
      const clock = fakeClock(Date.parse('2026-03-03T12:00:00Z'));
      const s = await ctx.open({ now: clock.now });
      // Left behind by a process that stopped before forgetting them.
      await s.countParseAttempts('r', ['left-1', 'left-2', 'again']);
      await s.countParseAttempts('other', ['left-3']);
      clock.advance(2 * DAY);
      // Counted again since (the message came back): its count is young again.
      await s.countParseAttempts('r', ['again', 'new']);
      const cutoff = new Date(clock.now() - DAY);
      expect(await s.pruneBatch('parseAttempts', new Date(clock.now() - 3 * DAY), 10)).toBe(0);
      expect(await s.pruneBatch('parseAttempts', cutoff, 2)).toBe(2);
      expect(await s.pruneBatch('parseAttempts', cutoff, 10)).toBe(1);
      expect(await s.pruneBatch('parseAttempts', cutoff, 10)).toBe(0);
      expect(await s.parseAttempts('r', ['left-1', 'left-2', 'again', 'new'])).toEqual(
        new Map([
          ['again', 2],
          ['new', 1],
        ]),
      );
      expect(await s.parseAttempts('other', ['left-3'])).toEqual(new Map());
    });

    it('reports its size and oldest items, and is not full', async () => {
      const s = ctx.store();
      const empty = await s.storeStats();
      expect(empty.bytes).toBeGreaterThan(0);
      expect(empty.oldest).toEqual({});
      await s.enqueue([input('r', 1), input('r', 2), input('r', 3)]);
      const [a, b] = await s.claim('r', 2, 'w', 60_000);
      await s.markDelivered([a!.id], { outcome: 'delivered' });
      await s.deadLetter(b!.id, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' });
      const stats = await s.storeStats();
      for (const k of ['queued', 'delivered', 'dead'] as const) {
        expect(Date.parse(stats.oldest[k]!)).toBeGreaterThan(Date.now() - 600_000);
      }
      expect(s.health()).toEqual({});
      expect(await s.reclaimSpace(1 << 20)).toBeGreaterThanOrEqual(0);
    });

    it('prunes a thread of the index whole, once its newest message is old and none of its messages has an item left', async () => {
      const s = ctx.store();
      const day = (d: number) => new Date(Date.UTC(2024, 0, d)).toISOString();
      const entry = (commentId: string, threadId: string, d: number) => ({ commentId, threadId, timestamp: day(d), participants: ['a@x'] });
      const item = input('r', 1);
      await s.indexThread('acme/x', [
        // Old and quiet: pruned.
        entry('a1', 'old', 1),
        entry('a2', 'old', 2),
        // One old message, one recent: the thread stays whole.
        entry('b1', 'live', 1),
        entry('b2', 'live', 40),
        // Old, but one of its messages still has an item (queued): stays.
        entry('c1', 'kept', 1),
        entry(item.commentId, 'kept', 2),
      ]);
      // The same thread id under another source is another thread, pruned on its own.
      await s.indexThread('acme/y', [entry('a1', 'old', 1)]);
      await s.enqueue([item]);
      const cutoff = new Date(Date.UTC(2024, 0, 30));
      // Two threads a step: the walk goes on from where it stopped and says when it reached the end.
      const seen: number[] = [];
      let cursor: ThreadCursor | undefined;
      for (;;) {
        const step = await s.pruneThreads(cutoff, 2, cursor);
        seen.push(step.deleted);
        if (step.next === null) break;
        cursor = step.next;
      }
      expect(seen.length).toBe(3);
      expect(seen.reduce((a, b) => a + b, 0)).toBe(3);
      const x = await s.threadMembers('acme/x', ['old', 'live', 'kept']);
      expect([...x.keys()].sort()).toEqual(['kept', 'live']);
      expect(x.get('live')!.map((e) => e.commentId)).toEqual(['b1', 'b2']);
      expect((await s.threadMembers('acme/y', ['old'])).size).toBe(0);
      // Its item delivered and pruned: the last old thread goes too.
      const [claimed] = await s.claim('r', 1, 'w', 60_000);
      await s.markDelivered([claimed!.id], { outcome: 'delivered' });
      expect(await s.pruneBatch('delivered', LATER(), 10)).toBe(1);
      expect(await s.pruneThreads(cutoff, 10)).toEqual({ deleted: 2, next: null });
      expect([...(await s.threadMembers('acme/x', ['old', 'live', 'kept'])).keys()]).toEqual(['live']);
    });

    it('prunes checkpoints by key prefix and age, a batch at a time, and leaves every other key', async () => {
      const s = ctx.store();
      for (const key of ['wake:graph:m/a', 'wake:gmail:w/b', 'wakeful', 'graph:m/a:inbox']) await s.setCheckpoint(key, { at: 1 });
      expect(await s.pruneCheckpoints('wake:', EARLIER(), 10)).toBe(0);
      expect(await s.pruneCheckpoints('wake:', LATER(), 1)).toBe(1);
      expect(await s.pruneCheckpoints('wake:', LATER(), 10)).toBe(1);
      expect(await s.pruneCheckpoints('wake:', LATER(), 10)).toBe(0);
      expect(await s.getCheckpoint('wake:graph:m/a')).toBeUndefined();
      expect(await s.getCheckpoint('wake:gmail:w/b')).toBeUndefined();
      expect(await s.getCheckpoint('wakeful')).toEqual({ at: 1 });
      expect(await s.getCheckpoint('graph:m/a:inbox')).toEqual({ at: 1 });
    });

    it('probes for space with a write that leaves nothing behind', async () => {
      const s = ctx.store();
      await s.setCheckpoint('files:/kept', { at: 1 });
      await s.probeSpace(256 * 1024);
      expect(s.health()).toEqual({});
      expect((await s.listCheckpoints()).map((c) => c.key)).toEqual(['files:/kept']);
      await expect(s.probeSpace(0)).rejects.toMatchObject({ code: 'MAILGATE_ERR_STORE_INVALID_ARGUMENT' });
    });
  });
}
