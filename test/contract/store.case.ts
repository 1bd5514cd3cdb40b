/**
 * The Store conformance suite: every implementation runs it (test/store/*.test.ts).
 * `fixture()` makes a fresh, empty store; its `open()` connects to that same store each time
 * it is called (two calls = two independent connections or pools), with the clock given as
 * `now` when there is one. Lease and due-time cases advance a fake clock instead of sleeping,
 * so they neither flake on a loaded machine nor depend on how long a query took.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import type { OutboxInput, Store } from '../../src/store/types.js';
import { controlCases } from './controls.case.js';
import { itemCases } from './items.case.js';
import { maintenanceCases } from './maintenance.case.js';
import { ownerCases } from './owners.case.js';
import { fileOrigin } from '../../adapters/files/identity.js';

/** Where each input went: the one enqueue's per-input answers. */
const itemsOf = async (s: Pick<Store, 'enqueue'>, items: OutboxInput[]) => (await s.enqueue(items)).items;
/** The counts of an enqueue, without its per-input outcomes (checked on their own by the cases that need them). */
const tally = ({ queued, deadLettered, duplicates }: Awaited<ReturnType<Store['enqueue']>>) => ({ queued, deadLettered, duplicates });

export interface StoreOpenOptions {
  now?: () => number;
}

export interface StoreFixture {
  open(options?: StoreOpenOptions): Promise<Store>;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A clock that moves only when told to. */
export interface FakeClock {
  now: () => number;
  advance(ms: number): void;
}

export function fakeClock(start = Date.now()): FakeClock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

let seq = 0;
/** A distinct, valid outbox input. */
export function input(route: string, n: number, extra: Partial<OutboxInput> = {}): OutboxInput {
  seq += 1;
  const commentId = (0xc0de0000 + n).toString(16);
  return {
    route,
    key: `files:/tmp/archive.mbox:${n}`,
    commentId,
    document: {
      raw_email: { headers: { raw: `Subject: message ${n}\r\nFrom: a@example.com` }, body: { plain: `body ${n} (${seq})` } },
      comment_id: commentId,
    },
    origin: fileOrigin('/tmp/archive.mbox', n),
    raw: Buffer.from(`Subject: message ${n}\r\n\r\nbody ${n}\r\n`),
    ...extra,
  };
}

export async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isGatewayError(err) ? err.code : err).toBe(code);
}

export interface ContractContext {
  store(): Store;
  open(options?: StoreOpenOptions): Promise<Store>;
}

export function storeContract(name: string, fixture: () => Promise<StoreFixture>): void {
  describe(`Store contract: ${name}`, () => {
    let target: StoreFixture;
    let main: Store;
    const opened: Store[] = [];
    const open = async (options?: StoreOpenOptions): Promise<Store> => {
      const s = await target.open(options);
      opened.push(s);
      return s;
    };
    beforeEach(async () => {
      target = await fixture();
      main = await open();
    });
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });
    const ctx: ContractContext = { store: () => main, open };

    describe('outbox', () => {
      it('enqueues idempotently on (route, key), also within one batch', async () => {
        const s = ctx.store();
        expect(tally(await s.enqueue([input('r1', 1), input('r1', 2)]))).toEqual({ queued: 2, deadLettered: 0, duplicates: 0 });
        expect(tally(await s.enqueue([input('r1', 2), input('r1', 3), input('r1', 3)]))).toEqual({
          queued: 1,
          deadLettered: 0,
          duplicates: 2,
        });
        expect(tally(await s.enqueue([input('r2', 1)]))).toEqual({ queued: 1, deadLettered: 0, duplicates: 0 });
        expect(tally(await s.enqueue([]))).toEqual({ queued: 0, deadLettered: 0, duplicates: 0 });
        expect(await s.outboxDepth('r1')).toBe(3);
        expect(await s.outboxDepth()).toBe(4);
      });

      it('writes the checkpoint with the items', async () => {
        const s = ctx.store();
        await s.enqueue([input('r', 1)], { key: 'files:/tmp/archive.mbox', value: { offset: 10, done: false } });
        expect(await s.getCheckpoint('files:/tmp/archive.mbox')).toEqual({ offset: 10, done: false });
        await s.enqueue([input('r', 1)], { key: 'files:/tmp/archive.mbox', value: { offset: 20 } });
        expect(await s.getCheckpoint('files:/tmp/archive.mbox')).toEqual({ offset: 20 });
        await s.setCheckpoint('imap:acct:INBOX', { uidValidity: 7, lastUid: 42 });
        expect(await s.getCheckpoint('imap:acct:INBOX')).toEqual({ uidValidity: 7, lastUid: 42 });
        expect(await s.getCheckpoint('nope')).toBeUndefined();
        const all = await s.listCheckpoints();
        expect(all.map((c) => c.key)).toEqual(['files:/tmp/archive.mbox', 'imap:acct:INBOX']);
        expect(Number.isNaN(Date.parse(all[0]?.updatedAt ?? ''))).toBe(false);
      });

      it('keeps neither items nor checkpoint when an enqueue fails midway', async () => {
        const s = ctx.store();
        const bad = input('r', 3, { commentId: null as unknown as string });
        await expectCode(
          s.enqueue([input('r', 1), input('r', 2), bad, input('r', 4)], { key: 'cp', value: { at: 4 } }),
          'MAILGATE_ERR_STORE_WRITE_FAILED',
        );
        // The checkpoint value cannot be stored (BigInt has no JSON form): the items roll back with it.
        await expectCode(s.enqueue([input('r', 5)], { key: 'cp', value: { at: 10n } }), 'MAILGATE_ERR_STORE_WRITE_FAILED');
        expect(await s.outboxDepth()).toBe(0);
        expect(await s.getCheckpoint('cp')).toBeUndefined();
        expect(await s.claim(undefined, 10, 'w', 60_000)).toEqual([]);
        // The store is still usable afterwards.
        expect((await s.enqueue([input('r', 1)], { key: 'cp', value: { at: 1 } })).queued).toBe(1);
        expect(await s.getCheckpoint('cp')).toEqual({ at: 1 });
      });

      it('claims ready items in enqueue order with a lease, and returns them without raw bytes', async () => {
        const s = ctx.store();
        const preview = {
          id: 'c0de0001',
          timestamp: '2024-01-02T03:04:05Z',
          user_properties: { 'string:Mailbox': 'x' },
          messages: [{ body: { text: 'hello' }, from: 'a@example.com' }],
        };
        const warnings = [{ code: 'MAILGATE_WARN_NO_BODY' as const, message: 'no body' }];
        await s.enqueue([input('r', 1, { preview, warnings }), input('r', 2), input('other', 3), input('r', 4)]);
        const first = await s.claim('r', 2, 'worker-a', 60_000);
        expect(first.map((i) => i.key)).toEqual(['files:/tmp/archive.mbox:1', 'files:/tmp/archive.mbox:2']);
        const one = first[0];
        expect(one).toMatchObject({
          route: 'r',
          commentId: 'c0de0001',
          attempts: 0,
          preview,
          warnings,
          origin: { adapter: 'files', id: '/tmp/archive.mbox:1', details: { index: 1 } },
        });
        expect(one?.document.raw_email.headers).toEqual({ raw: 'Subject: message 1\r\nFrom: a@example.com' });
        expect(one?.document.comment_id).toBe('c0de0001');
        expect(one).not.toHaveProperty('raw');
        expect(first[1]?.preview).toBeUndefined();
        expect(first[1]?.warnings).toEqual([]);
        expect(Number.isNaN(Date.parse(one?.enqueuedAt ?? ''))).toBe(false);
        const next = await s.claim('r', 10, 'worker-b', 60_000);
        expect(next.map((i) => i.key)).toEqual(['files:/tmp/archive.mbox:4']);
        expect(await s.claim('r', 10, 'worker-b', 60_000)).toEqual([]);
        expect((await s.claim(undefined, 10, 'worker-c', 60_000)).map((i) => i.route)).toEqual(['other']);
        expect(await s.outboxDepth('r')).toBe(3);
      });

      it('claims again once a lease expired, not before', async () => {
        const clock = fakeClock();
        const s = await ctx.open({ now: clock.now });
        await s.enqueue([input('r', 1), input('r', 2)]);
        expect(await s.claim('r', 1, 'a', 30_000)).toHaveLength(1);
        clock.advance(29_999);
        expect((await s.claim('r', 10, 'b', 60_000)).map((i) => i.key)).toEqual(['files:/tmp/archive.mbox:2']);
        clock.advance(1);
        expect((await s.claim('r', 10, 'c', 60_000)).map((i) => i.key)).toEqual(['files:/tmp/archive.mbox:1']);
      });

      it('renews the claims an owner still holds, and only those, from the time of the renewal', async () => {
        const clock = fakeClock();
        const s = await ctx.open({ now: clock.now });
        await s.enqueue([input('r', 1), input('r', 2), input('r', 3)]);
        const mine = await s.claim('r', 2, 'a', 1_000);
        expect(mine).toHaveLength(2);
        const [x, y] = mine.map((i) => i.id) as [number, number];
        expect(await s.renewClaims([x, y], 'a', 60_000)).toBe(2);
        clock.advance(30_000);
        // Renewed: nobody else gets them, though the first lease ran out; the third item was never claimed.
        expect((await s.claim('r', 10, 'b', 120_000)).map((i) => i.key)).toEqual(['files:/tmp/archive.mbox:3']);
        // Another owner cannot renew them, nor can anybody renew a finished item.
        expect(await s.renewClaims([x, y], 'b', 60_000)).toBe(0);
        await s.markDelivered([x], { outcome: 'delivered' });
        expect(await s.renewClaims([x, y], 'a', 60_000)).toBe(1);
        expect(await s.renewClaims([], 'a', 60_000)).toBe(0);
        await expectCode(s.renewClaims([y], 'a', 0), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
        // The second renewal runs 60 s from when it was made.
        clock.advance(59_999);
        expect(await s.claim('r', 10, 'c', 60_000)).toEqual([]);
        clock.advance(1);
        expect((await s.claim('r', 10, 'c', 60_000)).map((i) => i.id)).toEqual([y]);
      });

      it('returns the stored document text and ledger hashes with a claim, the document parsed on first read', async () => {
        const s = ctx.store();
        const hashes = { textHash: 'a'.repeat(64), docHash: 'b'.repeat(64) };
        const withText = input('r', 1, { hashes });
        const text = JSON.stringify(withText.document);
        await s.enqueue([{ ...withText, json: { document: text } }, input('r', 2)]);
        const [one, two] = await s.claim('r', 10, 'w', 60_000);
        expect(one?.documentJson).toBe(text);
        expect(one?.hashes).toEqual(hashes);
        expect(one?.document).toEqual(withText.document);
        expect(JSON.parse(two?.documentJson ?? '')).toEqual(two?.document);
        expect(two?.hashes).toBeUndefined();
      });

      it('tells which keys a route already holds, whatever their status', async () => {
        const s = ctx.store();
        await s.enqueue([
          input('r', 1),
          input('r', 2),
          input('other', 3),
          input('r', 4, { error: { code: 'MAILGATE_ERR_MIME_EMPTY', message: 'empty' } }),
        ]);
        const [first] = await s.claim('r', 1, 'w', 60_000);
        await s.markDelivered([first!.id], { outcome: 'delivered' });
        const keys = [1, 2, 3, 4, 5].map((n) => `files:/tmp/archive.mbox:${n}`);
        expect([...(await s.knownKeys('r', keys))].sort()).toEqual([keys[0], keys[1], keys[3]]);
        expect([...(await s.knownKeys('other', keys))]).toEqual([keys[2]]);
        expect((await s.knownKeys('r', [])).size).toBe(0);
      });

      it('never gives one item to two concurrent claimers', async () => {
        const a = ctx.store();
        const b = await ctx.open();
        const items = Array.from({ length: 300 }, (_, i) => input(i % 2 === 0 ? 'r' : 'q', i));
        await a.enqueue(items);
        const drain = async (s: Store, owner: string, route?: string): Promise<number[]> => {
          const got: number[] = [];
          for (;;) {
            const batch = await s.claim(route, 7, owner, 60_000);
            if (batch.length === 0) return got;
            got.push(...batch.map((i) => i.id));
          }
        };
        const results = await Promise.all([drain(a, 'a'), drain(b, 'b'), drain(a, 'c', 'r'), drain(b, 'd', 'q')]);
        const all = results.flat();
        expect(all).toHaveLength(300);
        expect(new Set(all).size).toBe(300);
      });

      it('stores each key once when writers enqueue overlapping batches at the same time', async () => {
        // Opposite orders make PostgreSQL writers deadlock on the unique index; the store re-runs the loser.
        const a = ctx.store();
        const b = await ctx.open();
        const keys = Array.from({ length: 1000 }, (_, i) => i);
        const run = (s: Store, order: number[]) =>
          s.enqueue(
            order.map((i) => input('r', i)),
            { key: 'cp', value: { n: order.length } },
          );
        for (let round = 0; round < 3; round += 1) {
          const results = await Promise.all([run(a, keys), run(b, [...keys].reverse()), run(b, keys)]);
          expect(results.reduce((n, r) => n + r.queued, 0)).toBe(round === 0 ? 1000 : 0);
          expect(results.reduce((n, r) => n + r.duplicates, 0)).toBe(round === 0 ? 2000 : 3000);
        }
        expect(await a.outboxDepth('r')).toBe(1000);
        expect((await a.counters('r'))[0]?.enqueued).toBe(1000);
      });

      it('marks items delivered or unchanged once, and counts them per route', async () => {
        const s = ctx.store();
        await s.enqueue([input('r', 1), input('r', 2), input('r', 3), input('q', 4)]);
        const items = await s.claim(undefined, 10, 'w', 60_000);
        const ids = items.map((i) => i.id);
        expect(await s.markDelivered(ids.slice(0, 2), { outcome: 'delivered' })).toBe(2);
        expect(await s.markDelivered(ids.slice(0, 3), { outcome: 'unchanged' })).toBe(1);
        expect(await s.markDelivered([], { outcome: 'delivered' })).toBe(0);
        expect(await s.outboxDepth()).toBe(1);
        expect(await s.deadLetter(ids[0] ?? 0, { code: 'X', message: 'too late' })).toBe(false);
        expect(await s.outboxCounts()).toEqual([
          { route: 'q', status: 'queued', count: 1 },
          { route: 'r', status: 'delivered', count: 3 },
        ]);
        await s.addAiUnits('r', 2);
        await s.addAiUnits('r', 0);
        await expectCode(s.addAiUnits('r', -1), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
        expect(await s.counters('r')).toEqual([{ route: 'r', enqueued: 3, delivered: 2, unchanged: 1, deadLettered: 0, aiUnits: 2 }]);
        expect((await s.counters()).map((c) => c.route)).toEqual(['q', 'r']);
      });

      it('marks delivered with the AI units and ledger entries in the same call, counting units even when no item changed', async () => {
        const s = ctx.store();
        await s.enqueue([input('r', 1), input('r', 2)]);
        const [a, b] = await s.claim('r', 10, 'w', 60_000);
        const at = '2024-01-01T00:00:00.000Z';
        const entry = (commentId: string, textHash: string) => ({
          commentId,
          textHash,
          docHash: 'p',
          outcome: 'delivered' as const,
          updatedAt: at,
        });
        const info = {
          outcome: 'delivered' as const,
          aiUnits: { route: 'r', units: 3 },
          ledger: [{ source: 'p/s', entries: [entry(a?.commentId ?? '', 't1')] }],
        };
        expect(await s.markDelivered([a?.id ?? 0], info)).toBe(1);
        expect(await s.markDelivered([a?.id ?? 0], { outcome: 'delivered', aiUnits: { route: 'r', units: 2 } })).toBe(0);
        expect(await s.markDelivered([], { outcome: 'delivered', ledger: [{ source: 'p/s', entries: [entry('other', 't2')] }] })).toBe(0);
        // A bad unit count rolls the whole call back.
        await expectCode(
          s.markDelivered([b?.id ?? 0], { outcome: 'delivered', aiUnits: { route: 'r', units: -1 } }),
          'MAILGATE_ERR_STORE_INVALID_ARGUMENT',
        );
        expect(await s.outboxDepth('r')).toBe(1);
        expect(await s.counters('r')).toEqual([{ route: 'r', enqueued: 2, delivered: 1, unchanged: 0, deadLettered: 0, aiUnits: 5 }]);
        const found = await s.lookup('p/s', [a?.commentId ?? '', 'other']);
        expect(found.get(a?.commentId ?? '')).toEqual({ textHash: 't1', docHash: 'p', outcome: 'delivered', updatedAt: at });
        expect(found.get('other')?.textHash).toBe('t2');
      });

      it('indexes the thread entries given with an enqueue, also for duplicates', async () => {
        const s = ctx.store();
        const entry = (commentId: string, ts: string) => ({
          commentId,
          threadId: 't1',
          timestamp: ts,
          from: 'a@example.com',
          participants: ['a@example.com'],
        });
        const e1 = entry('c1', '2024-01-01T00:00:00.000Z');
        const e2 = entry('c2', '2024-01-02T00:00:00.000Z');
        await s.enqueue([input('r', 1, { thread: { source: 'p/s', entry: e1 } }), input('r', 2)]);
        expect(await s.threadMembers('p/s', ['t1'])).toEqual(new Map([['t1', [e1]]]));
        const moved = { ...e1, timestamp: '2024-01-03T00:00:00.000Z' };
        await s.enqueue([
          input('r', 1, { thread: { source: 'p/s', entry: moved } }),
          input('r', 3, { thread: { source: 'p/s', entry: e2 } }),
        ]);
        expect(await s.threadMembers('p/s', ['t1'])).toEqual(new Map([['t1', [e2, moved]]]));
        expect((await s.threadMembers('p/other', ['t1'])).size).toBe(0);
      });

      it('prunes delivered items by age, keeping queued and dead ones', async () => {
        const s = ctx.store();
        await s.enqueue([input('r', 1), input('r', 2), input('r', 3, { error: { code: 'X', message: 'x' } })]);
        const [one] = await s.claim('r', 1, 'w', 60_000);
        await s.markDelivered([one?.id ?? 0], { outcome: 'delivered' });
        expect(await s.pruneDelivered(new Date(Date.now() - 3_600_000))).toBe(0);
        expect(await s.pruneDelivered(new Date(Date.now() + 60_000))).toBe(1);
        expect(await s.outboxCounts()).toEqual([
          { route: 'r', status: 'dead', count: 1 },
          { route: 'r', status: 'queued', count: 1 },
        ]);
        expect((await s.counters('r'))[0]?.delivered).toBe(1);
      });

      it('answers any item by id, whatever its status, with its document and without raw bytes', async () => {
        const s = ctx.store();
        await s.enqueue([
          input('r', 1),
          input('r', 2),
          input('r', 3),
          input('r', 4, { error: { code: 'MAILGATE_ERR_MIME_EMPTY', message: 'empty' } }),
        ]);
        const [one, two] = await s.claim('r', 2, 'w', 60_000);
        await s.markDelivered([one?.id ?? 0], { outcome: 'unchanged' });
        await s.deadLetter(two?.id ?? 0, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' });
        const delivered = await s.getItem(one?.id ?? 0);
        expect(delivered).toMatchObject({
          id: one?.id,
          route: 'r',
          key: 'files:/tmp/archive.mbox:1',
          status: 'delivered',
          outcome: 'unchanged',
          document: one?.document,
        });
        expect(delivered?.finishedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
        expect(delivered).not.toHaveProperty('raw');
        expect(await s.getItem(two?.id ?? 0)).toMatchObject({
          status: 'dead',
          lastError: { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' },
        });
        const queued = (await s.listDeadLetters({ limit: 10 })).find((d) => d.key.endsWith(':4'));
        expect(await s.getItem(queued?.id ?? 0)).toMatchObject({ status: 'dead', lastError: { code: 'MAILGATE_ERR_MIME_EMPTY' } });
        const third = await s.claim('r', 1, 'w', 60_000);
        expect(await s.getItem(third[0]?.id ?? 0)).toMatchObject({ status: 'queued', key: 'files:/tmp/archive.mbox:3' });
        expect(await s.getItem(999_999)).toBeUndefined();
      });

      it('makes an after-delivery action due with the delivery itself, keeps it through pruning until finished', async () => {
        const s = ctx.store();
        await s.enqueue([
          input('r', 1, { afterDelivery: true }),
          input('r', 2, { afterDelivery: true }),
          input('r', 3),
          input('r', 4, { afterDelivery: true }),
          input('r', 5, { afterDelivery: true, error: { code: 'X', message: 'x' } }),
        ]);
        expect(await s.pendingActions(10)).toEqual([]);
        const items = await s.claim('r', 4, 'w', 60_000);
        const id = (n: number) => items[n - 1]?.id ?? 0;
        await s.markDelivered([id(1), id(3)], { outcome: 'delivered' });
        await s.markDelivered([id(2)], { outcome: 'unchanged' });
        await s.scheduleRetry(id(4), 0, { code: 'MAILGATE_ERR_API_SERVER', message: '503' });
        const due = await s.pendingActions(10);
        expect(due.map((d) => d.id)).toEqual([id(1), id(2)]);
        expect(due[0]).toEqual({
          id: id(1),
          route: 'r',
          origin: fileOrigin('/tmp/archive.mbox', 1),
        });
        expect((await s.pendingActions(1, id(1))).map((d) => d.id)).toEqual([id(2)]);
        // Retention never drops an item whose action is still due.
        expect(await s.pruneDelivered(new Date(Date.now() + 60_000))).toBe(1);
        expect(await s.finishActions([id(1), id(3)])).toBe(1);
        expect((await s.pendingActions(10)).map((d) => d.id)).toEqual([id(2)]);
        expect(await s.finishActions([id(2)])).toBe(1);
        expect(await s.finishActions([id(2)])).toBe(0);
        expect(await s.pendingActions(10)).toEqual([]);
        expect(await s.pruneDelivered(new Date(Date.now() + 60_000))).toBe(2);
      });

      it('schedules retries with a reason, releasing the lease, due after their delay', async () => {
        const clock = fakeClock();
        const s = await ctx.open({ now: clock.now });
        await s.enqueue([input('r', 1), input('r', 2)]);
        const [one, two] = await s.claim('r', 2, 'w', 600_000);
        expect(await s.scheduleRetry(one?.id ?? 0, 60_000, { code: 'MAILGATE_ERR_API_SERVER', message: '503' })).toBe(1);
        expect(await s.scheduleRetry([two?.id ?? 0], 0, { code: 'MAILGATE_ERR_API_NETWORK', message: 'reset' })).toBe(1);
        const due = await s.claim('r', 10, 'w2', 600_000);
        expect(due.map((i) => i.id)).toEqual([two?.id]);
        expect(due[0]).toMatchObject({ attempts: 1, lastError: { code: 'MAILGATE_ERR_API_NETWORK', message: 'reset' } });
        expect(await s.outboxDepth('r')).toBe(2);
        clock.advance(59_999);
        expect(await s.claim('r', 10, 'w3', 600_000)).toEqual([]);
        clock.advance(1);
        const delayed = await s.claim('r', 10, 'w3', 600_000);
        expect(delayed.map((i) => [i.id, i.attempts])).toEqual([[one?.id, 1]]);
        await s.scheduleRetry(one?.id ?? 0, 0, { code: 'MAILGATE_ERR_API_SERVER', message: '503 again' });
        const later = await s.claim('r', 10, 'w4', 600_000);
        expect(later.map((i) => [i.id, i.attempts])).toEqual([[one?.id, 2]]);
      });

      it('refuses out-of-range limits and delays with a coded error', async () => {
        const s = ctx.store();
        await expectCode(s.claim('r', 0, 'w', 1000), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
        await expectCode(s.claim('r', 1.5, 'w', 1000), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
        await expectCode(s.claim('r', 1, 'w', 0), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
        await expectCode(s.scheduleRetry(1, -1, { code: 'X', message: 'x' }), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
        await expectCode(s.acquireLease('m', 'o', 0), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
        await expectCode(s.listDeadLetters({ limit: 0 }), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
      });

      it('round-trips NUL characters, astral text and arbitrary raw bytes', async () => {
        const s = ctx.store();
        const raw = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
        const body = 'nul:\u0000 emoji:😀 rtl:שלום \\u0000 literal';
        const item = input('r', 1, { raw, error: { code: 'MAILGATE_ERR_MIME_NOT_EMAIL', message: 'bad\u0000bytes' } });
        item.document.raw_email.body = { plain: body };
        await s.enqueue([item]);
        const [dl] = await s.listDeadLetters({ limit: 10 });
        const detail = await s.getDeadLetter(dl?.id ?? 0);
        expect(detail?.raw?.equals(raw)).toBe(true);
        expect(detail?.document.raw_email.body).toEqual({ plain: body });
        expect(detail?.error).toEqual({ code: 'MAILGATE_ERR_MIME_NOT_EMAIL', message: 'bad\u0000bytes' });
      });
    });

    deadLetterCases(ctx);
    stateCases(ctx);
    pushCases(ctx);
    ownerCases(ctx);
    itemCases(ctx);
    controlCases(ctx);
    maintenanceCases(ctx);
  });
}

function deadLetterCases(ctx: ContractContext): void {
  describe('dead letters', () => {
    it('keeps parse failures and dead-lettered items with their raw bytes', async () => {
      const s = ctx.store();
      const failed = input('r', 1, { error: { code: 'MAILGATE_ERR_MIME_TIMEOUT', message: 'parse took too long' } });
      expect(tally(await s.enqueue([failed, input('r', 2), input('q', 3)]))).toEqual({ queued: 2, deadLettered: 1, duplicates: 0 });
      const [two] = await s.claim('r', 10, 'w', 60_000);
      expect(await s.deadLetter(two?.id ?? 0, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: '422: bad thing' })).toBe(true);
      expect(await s.deadLetter(two?.id ?? 0, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'twice' })).toBe(false);
      expect(await s.claim('r', 10, 'w', 60_000)).toEqual([]);
      const list = await s.listDeadLetters({ limit: 10 });
      expect(list.map((d) => [d.key, d.error.code, d.hasRaw])).toEqual([
        ['files:/tmp/archive.mbox:1', 'MAILGATE_ERR_MIME_TIMEOUT', true],
        ['files:/tmp/archive.mbox:2', 'MAILGATE_ERR_BATCH_REJECTED', true],
      ]);
      expect(list[1]).toMatchObject({ route: 'r', commentId: 'c0de0002', error: { message: '422: bad thing' } });
      expect(Date.parse(list[1]?.deadAt ?? '')).toBeGreaterThanOrEqual(Date.parse(list[1]?.enqueuedAt ?? '') - 1000);
      const detail = await s.getDeadLetter(list[0]?.id ?? 0);
      expect(detail?.raw?.toString()).toBe(failed.raw?.toString());
      expect(detail?.document).toEqual(failed.document);
      expect(await s.getDeadLetter(two?.id ?? 0)).toMatchObject({ commentId: 'c0de0002' });
      expect(await s.getDeadLetter(123_456)).toBeUndefined();
      expect(await s.counters('r')).toEqual([{ route: 'r', enqueued: 1, delivered: 0, unchanged: 0, deadLettered: 2, aiUnits: 0 }]);
    });

    it('lists dead letters by route with a cursor', async () => {
      const s = ctx.store();
      const err = { code: 'MAILGATE_ERR_MIME_NOT_EMAIL', message: 'x' };
      await s.enqueue(Array.from({ length: 5 }, (_, i) => input(i < 3 ? 'r' : 'q', i, { error: err, raw: undefined })));
      const page1 = await s.listDeadLetters({ route: 'r', limit: 2 });
      const page2 = await s.listDeadLetters({ route: 'r', limit: 2, after: page1[1]?.id ?? 0 });
      expect([...page1, ...page2].map((d) => d.key)).toEqual([0, 1, 2].map((i) => `files:/tmp/archive.mbox:${i}`));
      expect(page2[0]?.hasRaw).toBe(false);
      expect((await s.getDeadLetter(page2[0]?.id ?? 0))?.raw).toBeUndefined();
      expect(await s.listDeadLetters({ limit: 100 })).toHaveLength(5);
    });

    it('replays a dead letter with a re-parsed replacement', async () => {
      const s = ctx.store();
      const original = input('r', 1, { error: { code: 'MAILGATE_ERR_MIME_TIMEOUT', message: 'slow' } });
      await s.enqueue([original]);
      const [dl] = await s.listDeadLetters({ limit: 1 });
      const id = dl?.id ?? 0;
      await expectCode(s.replayDeadLetter(id, input('r', 2)), 'MAILGATE_ERR_STORE_REPLAY_MISMATCH');
      await expectCode(s.replayDeadLetter(id + 1000, input('r', 1)), 'MAILGATE_ERR_STORE_NOT_FOUND');
      const still = input('r', 1, { raw: undefined, error: { code: 'MAILGATE_ERR_MIME_NOT_EMAIL', message: 'still bad' } });
      expect(await s.replayDeadLetter(id, still)).toEqual({ id, status: 'dead' });
      const again = await s.getDeadLetter(id);
      expect(again?.error.message).toBe('still bad');
      expect(again?.raw?.equals(original.raw ?? Buffer.alloc(0))).toBe(true);
      const hashes = { textHash: 't'.repeat(64), docHash: 'd'.repeat(64) };
      const thread = {
        source: 'p/s',
        entry: { commentId: original.commentId, threadId: 'abc', timestamp: '2024-01-01T00:00:00.000Z', participants: ['a@example.com'] },
      };
      const fixed = input('r', 1, {
        raw: undefined,
        hashes,
        thread,
        warnings: [{ code: 'MAILGATE_WARN_MIME_MALFORMED', message: 'best effort' }],
      });
      expect(await s.replayDeadLetter(id, fixed)).toEqual({ id, status: 'queued' });
      expect(await s.listDeadLetters({ limit: 10 })).toEqual([]);
      const [item] = await s.claim('r', 10, 'w', 60_000);
      expect(item).toMatchObject({ id, attempts: 0, document: fixed.document, warnings: fixed.warnings, hashes });
      // A message that failed parsing enters the thread index once replayed.
      expect((await s.threadMembers('p/s', ['abc'])).get('abc')?.map((e) => e.commentId)).toEqual([original.commentId]);
      await expectCode(s.replayDeadLetter(id, fixed), 'MAILGATE_ERR_STORE_NOT_FOUND');
      // The enqueue is still idempotent on the replayed key.
      expect((await s.enqueue([input('r', 1)])).duplicates).toBe(1);
    });

    it('purges by ids, route, age or all, and needs a filter', async () => {
      const s = ctx.store();
      const err = { code: 'MAILGATE_ERR_MIME_NOT_EMAIL', message: 'x' };
      await s.enqueue([
        input('r', 1, { error: err }),
        input('r', 2, { error: err }),
        input('q', 3, { error: err }),
        input('q', 4, { error: err }),
        input('q', 5),
      ]);
      const ids = (await s.listDeadLetters({ limit: 10 })).map((d) => d.id);
      await expectCode(s.purgeDeadLetters({}), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
      expect(await s.purgeDeadLetters({ ids: [ids[0] ?? 0] })).toBe(1);
      expect(await s.purgeDeadLetters({ route: 'r', olderThan: new Date(Date.now() - 3_600_000) })).toBe(0);
      expect(await s.purgeDeadLetters({ route: 'r', olderThan: new Date(Date.now() + 60_000) })).toBe(1);
      expect(await s.purgeDeadLetters({ all: true })).toBe(2);
      expect(await s.outboxDepth('q')).toBe(1);
      // A purged key may come in again (the ledger, not the outbox, prevents double billing).
      expect((await s.enqueue([input('r', 1)])).queued).toBe(1);
    });
  });
}

function stateCases(ctx: ContractContext): void {
  describe('ledger, leases, threads, predictions, lifecycle', () => {
    it('records and looks up ledger entries per source', async () => {
      const s = ctx.store();
      expect((await s.lookup('p/s', ['aa'])).size).toBe(0);
      await s.record('p/s', [
        { commentId: 'aa', textHash: 't1', docHash: 'p1', outcome: 'delivered', updatedAt: '2024-01-01T00:00:00.000Z' },
        { commentId: 'bb', textHash: 't2', docHash: 'p2', outcome: 'rejected', updatedAt: '2024-01-01T00:00:00.000Z' },
        { commentId: 'aa', textHash: 't3', docHash: 'p3', outcome: 'delivered', updatedAt: '2024-01-02T00:00:00.000Z' },
      ]);
      await s.record('p/other', [
        { commentId: 'aa', textHash: 'x', docHash: 'y', outcome: 'delivered', updatedAt: '2024-01-03T00:00:00.000Z' },
      ]);
      await s.record('p/s', []);
      const found = await s.lookup('p/s', ['aa', 'bb', 'cc']);
      expect([...found.entries()].sort()).toEqual([
        ['aa', { textHash: 't3', docHash: 'p3', outcome: 'delivered', updatedAt: '2024-01-02T00:00:00.000Z' }],
        ['bb', { textHash: 't2', docHash: 'p2', outcome: 'rejected', updatedAt: '2024-01-01T00:00:00.000Z' }],
      ]);
      expect((await s.lookup('p/s', [])).size).toBe(0);
    });

    it('grants leases to one owner, renews, releases, and lets them be stolen after expiry, not before', async () => {
      const clock = fakeClock();
      const s = await ctx.open({ now: clock.now });
      const other = await ctx.open({ now: clock.now });
      const first = await s.acquireLease('imap:acct', 'gw-1', 60_000);
      expect(first).toMatchObject({ name: 'imap:acct', owner: 'gw-1', expiresAt: new Date(clock.now() + 60_000).toISOString() });
      expect(await other.acquireLease('imap:acct', 'gw-2', 60_000)).toBeUndefined();
      clock.advance(30_000);
      // Held live by the same owner: extended with the same token.
      expect((await s.acquireLease('imap:acct', 'gw-1', 60_000))?.token).toBe(first!.token);
      await s.renewLease('imap:acct', 'gw-1', 40_000);
      expect((await other.getLease('imap:acct'))?.expiresAt).toBe(new Date(clock.now() + 40_000).toISOString());
      clock.advance(39_999);
      expect(await other.acquireLease('imap:acct', 'gw-2', 60_000)).toBeUndefined();
      expect((await other.getLease('imap:acct'))?.owner).toBe('gw-1');
      clock.advance(1);
      expect(await other.getLease('imap:acct')).toBeUndefined();
      const stolen = await other.acquireLease('imap:acct', 'gw-2', 60_000);
      expect(stolen?.token).toBeGreaterThan(first!.token);
      await expectCode(s.renewLease('imap:acct', 'gw-1', 60_000), 'MAILGATE_ERR_STORE_LEASE_LOST');
      expect(await s.releaseLease('imap:acct', 'gw-1')).toBe(false);
      const lease = await s.getLease('imap:acct');
      expect(lease).toEqual({
        name: 'imap:acct',
        owner: 'gw-2',
        expiresAt: new Date(clock.now() + 60_000).toISOString(),
        token: stolen!.token,
      });
      expect(await other.releaseLease('imap:acct', 'gw-2')).toBe(true);
      expect(await s.getLease('imap:acct')).toBeUndefined();
      await expectCode(s.renewLease('imap:acct', 'gw-1', 60_000), 'MAILGATE_ERR_STORE_LEASE_LOST');
      // A release keeps the token: the next grant, even to the last holder, gets a greater one.
      expect((await other.acquireLease('imap:acct', 'gw-2', 60_000))?.token).toBeGreaterThan(stolen!.token);
    });

    it('gives one of many racing acquirers the lease', async () => {
      const stores = [ctx.store(), await ctx.open(), ctx.store(), await ctx.open()];
      const won = await Promise.all(stores.map((s, i) => s.acquireLease('imap:shared', `gw-${i}`, 60_000)));
      expect(won.filter((l) => l !== undefined)).toHaveLength(1);
    });

    it('renews all leases of an owner at once and lists the live ones', async () => {
      const clock = fakeClock();
      const s = await ctx.open({ now: clock.now });
      await s.acquireLease('imap:a', 'gw-1', 10_000);
      await s.acquireLease('imap:b', 'gw-1', 30_000);
      await s.acquireLease('imap:c', 'gw-2', 30_000);
      clock.advance(10_000);
      // imap:a ran out: it is lost, not renewed.
      const renewed = await s.renewLeases('gw-1', 30_000);
      expect(renewed.map((l) => [l.name, l.expiresAt])).toEqual([['imap:b', new Date(clock.now() + 30_000).toISOString()]]);
      expect((await s.listLeases()).map((l) => [l.name, l.owner])).toEqual([
        ['imap:b', 'gw-1'],
        ['imap:c', 'gw-2'],
      ]);
      expect(await s.renewLeases('gw-404', 30_000)).toEqual([]);
    });

    it('refuses writes under a stale fencing token and writes nothing of them', async () => {
      const clock = fakeClock();
      const s = await ctx.open({ now: clock.now });
      const other = await ctx.open({ now: clock.now });
      const lease = (await s.acquireLease('imap:acct', 'gw-1', 30_000))!;
      const fence = { lease: 'imap:acct', owner: 'gw-1', token: lease.token };
      const cp = (n: number) => ({ key: 'imap:acct:INBOX', value: { lastUid: n } });
      await s.enqueue([input('r', 1)], cp(1), fence);
      await s.setCheckpoint('imap:acct:INBOX', { lastUid: 2 }, fence);
      // Paused past the lease: another replica takes it over.
      clock.advance(30_000);
      const taken = (await other.acquireLease('imap:acct', 'gw-2', 30_000))!;
      await expectCode(s.enqueue([input('r', 2)], cp(3), fence), 'MAILGATE_ERR_STORE_FENCED');
      await expectCode(s.setCheckpoint('imap:acct:INBOX', { lastUid: 4 }, fence), 'MAILGATE_ERR_STORE_FENCED');
      expect(await s.getCheckpoint('imap:acct:INBOX')).toEqual({ lastUid: 2 });
      expect([...(await s.knownKeys('r', [input('r', 1).key, input('r', 2).key]))]).toEqual([input('r', 1).key]);
      // The new holder writes with its own token; the old token stays refused even for the old owner string.
      await other.enqueue([input('r', 3)], cp(5), { lease: 'imap:acct', owner: 'gw-2', token: taken.token });
      await expectCode(
        s.enqueue([input('r', 4)], undefined, { lease: 'imap:acct', owner: 'gw-2', token: lease.token }),
        'MAILGATE_ERR_STORE_FENCED',
      );
      // Expired and not taken over is lost too: the write waits for a fresh grant.
      clock.advance(30_000);
      await expectCode(
        other.setCheckpoint('imap:acct:INBOX', { lastUid: 6 }, { lease: 'imap:acct', owner: 'gw-2', token: taken.token }),
        'MAILGATE_ERR_STORE_FENCED',
      );
      expect(await s.getCheckpoint('imap:acct:INBOX')).toEqual({ lastUid: 5 });
      await expectCode(s.enqueue([], undefined, { lease: 'imap:none', owner: 'gw-1', token: 1 }), 'MAILGATE_ERR_STORE_FENCED');
    });

    it('indexes threads per source and returns members oldest first', async () => {
      const s = ctx.store();
      await s.indexThread('p/s', [
        { commentId: 'c3', threadId: 't1', timestamp: '2024-01-03T00:00:00Z', from: 'c@x', participants: ['c@x', 'a@x'] },
        { commentId: 'c1', threadId: 't1', timestamp: '2024-01-01T00:00:00Z', from: 'a@x', participants: ['a@x', 'b@x'] },
        { commentId: 'c2', threadId: 't2', timestamp: '2024-01-02T00:00:00Z', participants: [] },
      ]);
      await s.indexThread('p/other', [{ commentId: 'c9', threadId: 't1', timestamp: '2024-01-01T00:00:00Z', participants: [] }]);
      await s.indexThread('p/s', [
        { commentId: 'c0', threadId: 't1', timestamp: '2023-12-31T23:00:00+00:00', from: 'z@x', participants: ['z@x'] },
      ]);
      const m = await s.threadMembers('p/s', ['t1', 't2', 't404']);
      expect(m.get('t1')?.map((e) => e.commentId)).toEqual(['c0', 'c1', 'c3']);
      expect(m.get('t1')?.[0]).toEqual({
        commentId: 'c0',
        threadId: 't1',
        timestamp: '2023-12-31T23:00:00+00:00',
        from: 'z@x',
        participants: ['z@x'],
      });
      expect(m.get('t2')).toEqual([{ commentId: 'c2', threadId: 't2', timestamp: '2024-01-02T00:00:00Z', participants: [] }]);
      expect(m.has('t404')).toBe(false);
      // Re-indexing a comment moves it (a late parent message re-roots the thread).
      await s.indexThread('p/s', [{ commentId: 'c2', threadId: 't1', timestamp: '2024-01-02T00:00:00Z', participants: [] }]);
      const moved = await s.threadMembers('p/s', ['t1', 't2']);
      expect(moved.get('t1')?.map((e) => e.commentId)).toEqual(['c0', 'c1', 'c2', 'c3']);
      expect(moved.has('t2')).toBe(false);
    });

    it('indexes the last entry of a comment given twice in one call', async () => {
      const s = ctx.store();
      await s.indexThread('p/s', [
        { commentId: 'c1', threadId: 't1', timestamp: '2024-01-01T00:00:00Z', from: 'a@x', participants: ['a@x'] },
        { commentId: 'c1', threadId: 't2', timestamp: '2024-01-02T00:00:00Z', from: 'b@x', participants: ['b@x'] },
      ]);
      const m = await s.threadMembers('p/s', ['t1', 't2']);
      expect(m.has('t1')).toBe(false);
      expect(m.get('t2')).toEqual([
        { commentId: 'c1', threadId: 't2', timestamp: '2024-01-02T00:00:00Z', from: 'b@x', participants: ['b@x'] },
      ]);
    });

    it('stores a lone surrogate in any text as U+FFFD, as a driver binds it (search fields, threads, ledger)', async () => {
      const s = ctx.store();
      const odd = (t: string) => `${t}\ud800!`;
      const fixed = (t: string) => `${t}\ufffd!`;
      const facts = {
        sender: odd('s@x'),
        senderName: odd('Name'),
        subject: odd('Subject'),
        messageId: odd('m@x'),
        timestamp: 1_700_000_000_000,
      };
      const entry = { commentId: 'c1', threadId: odd('t'), timestamp: '2024-01-01T00:00:00Z', from: odd('f@x'), participants: ['p@x'] };
      await s.enqueue([input('lone', 1, { facts, thread: { source: 'p/lone', entry } })]);
      const [item] = await s.listItems({ route: 'lone', limit: 10 });
      expect([item?.sender, item?.senderName, item?.subject, item?.messageId]).toEqual([
        fixed('s@x'),
        fixed('Name'),
        fixed('Subject'),
        fixed('m@x'),
      ]);
      expect((await s.listItems({ q: fixed('subject'), limit: 10 })).map((i) => i.id)).toEqual([item!.id]);
      const members = await s.threadMembers('p/lone', [fixed('t')]);
      expect(members.get(fixed('t'))).toEqual([{ ...entry, threadId: fixed('t'), from: fixed('f@x') }]);
      await s.record('p/lone', [
        { commentId: odd('c'), textHash: 'h', docHash: 'd', outcome: 'delivered', updatedAt: '2024-01-01T00:00:00.000Z' },
      ]);
      expect([...(await s.lookup('p/lone', [fixed('c')])).values()].map((e) => e.textHash)).toEqual(['h']);
    });

    it('keeps the latest predictions per comment and lists them', async () => {
      const s = ctx.store();
      const model = { version: 3, time: '2024-01-01T00:00:00Z' };
      await s.savePredictions('r', [
        { commentId: 'aa', key: 'k1', predictions: [{ name: ['Billing'], probability: 0.9 }], model },
        { commentId: 'bb', key: 'k2', predictions: [], model: null },
      ]);
      await s.savePredictions('q', [{ commentId: 'aa', key: 'k1', predictions: [], model }]);
      await s.savePredictions('r', [
        { commentId: 'aa', key: 'k1', predictions: [{ name: ['Billing', 'Refund'], probability: 0.7, sentiment: -0.2 }], model },
      ]);
      const all = await s.listPredictions({ route: 'r', limit: 10 });
      expect(all.map((p) => [p.commentId, p.predictions])).toEqual([
        ['bb', []],
        ['aa', [{ name: ['Billing', 'Refund'], probability: 0.7, sentiment: -0.2 }]],
      ]);
      expect(all[0]).toMatchObject({ route: 'r', key: 'k2', model: null });
      expect(all[1]?.model).toEqual(model);
      const page = await s.listPredictions({ route: 'r', limit: 1, after: all[0]?.id ?? 0 });
      expect(page.map((p) => p.commentId)).toEqual(['aa']);
      expect((await s.listPredictions({ commentIds: ['aa'], limit: 10 })).map((p) => p.route).sort()).toEqual(['q', 'r']);
      await s.savePredictions('r', []);
    });

    it('gives a re-predicted comment a new id past every cursor, so a sink reading after its cursor sees it again', async () => {
      const s = ctx.store();
      const model = { version: 1, time: '2024-01-01T00:00:00Z' };
      await s.savePredictions('r', [
        { commentId: 'aa', key: 'k1', predictions: [{ name: ['Old'], probability: 0.5 }], model },
        { commentId: 'bb', key: 'k2', predictions: [], model },
      ]);
      const first = await s.listPredictions({ route: 'r', limit: 10 });
      const cursor = Math.max(...first.map((p) => p.id));
      await s.savePredictions('r', [{ commentId: 'aa', key: 'k1', predictions: [{ name: ['New'], probability: 0.8 }], model }]);
      const next = await s.listPredictions({ route: 'r', limit: 10, after: cursor });
      expect(next.map((p) => [p.commentId, p.predictions[0]?.name])).toEqual([['aa', ['New']]]);
      expect(next[0]!.id).toBeGreaterThan(cursor);
      // Still one row per comment.
      expect((await s.listPredictions({ route: 'r', limit: 10 })).map((p) => p.commentId)).toEqual(['bb', 'aa']);
    });

    it('a cursor reader racing concurrent saves of one route never skips a prediction', async () => {
      const writers = [ctx.store(), await ctx.open(), await ctx.open()];
      const reader = await ctx.open();
      const model = null;
      const n = 300;
      let writing = true;
      const seen = new Set<string>();
      let cursor = 0;
      const read = async (): Promise<void> => {
        for (const p of await reader.listPredictions({ route: 'race', limit: 1000, after: cursor })) {
          seen.add(p.commentId);
          cursor = p.id;
        }
      };
      const reading = (async () => {
        while (writing) {
          await read();
          await sleep(1);
        }
      })();
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          writers[i % writers.length]!.savePredictions('race', [
            { commentId: `c${i}`, key: `k${i}`, predictions: [], model },
            { commentId: `d${i}`, key: `l${i}`, predictions: [], model },
          ]),
        ),
      );
      writing = false;
      await reading;
      await read();
      expect(seen.size).toBe(2 * n);
    });

    it('migrates idempotently and keeps everything across a reopen', async () => {
      const s = ctx.store();
      const version = await s.migrate();
      expect(version).toBeGreaterThanOrEqual(1);
      expect(await s.migrate()).toBe(version);
      await s.enqueue([input('r', 1), input('r', 2)], { key: 'cp', value: { n: 2 } });
      await s.record('src', [{ commentId: 'aa', textHash: 't', docHash: 'p', outcome: 'delivered', updatedAt: 'now' }]);
      await s.close();
      await s.close();
      const again = await ctx.open();
      expect(await again.migrate()).toBe(version);
      expect(await again.getCheckpoint('cp')).toEqual({ n: 2 });
      expect((await again.claim('r', 10, 'w', 60_000)).map((i) => i.commentId)).toEqual(['c0de0001', 'c0de0002']);
      expect((await again.lookup('src', ['aa'])).get('aa')?.textHash).toBe('t');
      expect(tally(await again.enqueue([input('r', 1)]))).toEqual({ queued: 0, deadLettered: 0, duplicates: 1 });
    });

    it('fails with a coded error once closed', async () => {
      const s = await ctx.open();
      await s.close();
      await expectCode(s.outboxDepth(), 'MAILGATE_ERR_STORE_UNAVAILABLE');
    });
  });
}

/** A pushed message: keyed by the SHA-256 of its bytes, its provider event id an alias. */
function pushed(route: string, n: number, extra: Partial<OutboxInput> = {}): OutboxInput {
  const envelope = { from: 'a@example.com', to: ['b@example.com', 'c@example.com'] };
  const origin = { adapter: 'webhook:mailgun', instance: 'in', id: `ev-${n}`, envelope, details: { eventId: `ev-${n}` } };
  const key = `sha256:${n.toString(16).padStart(64, '0')}|acme/support`;
  return input(route, n, { key, aliases: [`webhook:mailgun:in:event:ev-${n}|acme/support`], origin, ...extra });
}

function pushCases(ctx: ContractContext): void {
  describe('push intake keys', () => {
    it('answers each input its item id, a duplicate by key or by alias the first item, and writes nothing for duplicates', async () => {
      const s = ctx.store();
      const [a, b] = await itemsOf(s, [pushed('r', 1), pushed('r', 2)]);
      expect(a).toMatchObject({ duplicate: false, status: 'queued', key: pushed('r', 1).key });
      expect(b?.id).not.toBe(a?.id);
      // Same bytes again; then a re-encoded retry (other bytes, same event id); then both within one batch.
      const sameBytes = pushed('r', 1, { aliases: [] });
      const sameEvent = pushed('r', 1, { key: 'sha256:other|acme/support' });
      const twice = pushed('r', 3);
      const again = await itemsOf(s, [sameBytes, sameEvent, twice, twice]);
      expect(again.map((o) => [o.id, o.duplicate, o.key])).toEqual([
        [a?.id, true, pushed('r', 1).key],
        [a?.id, true, pushed('r', 1).key],
        [again[2]?.id, false, twice.key],
        [again[2]?.id, true, twice.key],
      ]);
      // The same message for another route is another item.
      const [other] = await itemsOf(s, [pushed('q', 1)]);
      expect(other?.duplicate).toBe(false);
      expect(await s.outboxDepth('r')).toBe(3);
      expect((await s.counters('r'))[0]?.enqueued).toBe(3);
      expect(await itemsOf(s, [])).toEqual([]);
      const item = await s.getItem(a?.id ?? 0);
      expect(item?.origin).toEqual(pushed('r', 1).origin);
    });

    it('answers each input of a large batch its own item: new keys, stored ones and ones repeated in the batch', async () => {
      const s = ctx.store();
      // Every seventh key stored before; keys 5 and 100 given twice more (within one statement's
      // rows and across statements of 64), and one dead letter among them.
      const before = await itemsOf(
        s,
        Array.from({ length: 30 }, (_, i) => input('r', i * 7)),
      );
      const ns = [...Array.from({ length: 200 }, (_, i) => i), 5, 100, 5];
      const batch = ns.map((n) =>
        n === 3 ? input('r', n, { error: { code: 'MAILGATE_ERR_MIME_PARSE', message: 'bad' } }) : input('r', n),
      );
      const out = await itemsOf(s, batch);
      const firstOf = new Map<number, number>();
      for (const [i, o] of out.entries()) {
        const n = ns[i]!;
        expect(o.key).toBe(input('r', n).key);
        const stored = n % 7 === 0 ? before[n / 7]?.id : undefined;
        const first = firstOf.get(n);
        expect(o.duplicate).toBe(stored !== undefined || first !== undefined);
        if (stored !== undefined) expect(o.id).toBe(stored);
        else if (first !== undefined) expect(o.id).toBe(first);
        else firstOf.set(n, o.id);
        expect((await s.itemState(o.id))?.key).toBe(o.key);
      }
      expect(out[3]).toMatchObject({ duplicate: false, status: 'dead' });
      expect(new Set(out.map((o) => o.id)).size).toBe(200);
      expect(tally(await s.enqueue([]))).toEqual({ queued: 0, deadLettered: 0, duplicates: 0 });
      expect(await s.outboxDepth('r')).toBe(30 + 171 - 1);
    });

    it('adds the aliases of a duplicate to the item it matched', async () => {
      const s = ctx.store();
      const [first] = await itemsOf(s, [pushed('r', 1)]);
      // The same bytes under a second event id: afterwards that id alone finds the item too.
      await itemsOf(s, [pushed('r', 1, { aliases: ['webhook:mailgun:in:event:second|acme/support'] })]);
      const [byAlias] = await itemsOf(s, [pushed('r', 9, { aliases: ['webhook:mailgun:in:event:second|acme/support'] })]);
      expect(byAlias).toMatchObject({ id: first?.id, duplicate: true });
      expect(await s.outboxDepth('r')).toBe(1);
    });

    it('stores parse failures as dead letters with their bytes', async () => {
      const s = ctx.store();
      const failed = pushed('r', 1, { error: { code: 'MAILGATE_ERR_MIME_NOT_EMAIL', message: 'no header' } });
      const [dead] = await itemsOf(s, [failed]);
      expect(dead).toMatchObject({ duplicate: false, status: 'dead' });
      expect((await s.getDeadLetter(dead?.id ?? 0))?.raw?.equals(failed.raw!)).toBe(true);
      expect((await s.counters('r'))[0]).toMatchObject({ enqueued: 0, deadLettered: 1 });
      expect((await itemsOf(s, [failed]))[0]).toMatchObject({ id: dead?.id, duplicate: true, status: 'dead' });
    });

    it('keeps nothing of a batch that fails midway, aliases included', async () => {
      const s = ctx.store();
      const bad = pushed('r', 3, { commentId: null as unknown as string });
      await expectCode(itemsOf(s, [pushed('r', 1), pushed('r', 2), bad]), 'MAILGATE_ERR_STORE_WRITE_FAILED');
      expect(await s.outboxDepth()).toBe(0);
      expect((await s.findKeys('r', [pushed('r', 1).key, ...pushed('r', 1).aliases!])).size).toBe(0);
      expect((await itemsOf(s, [pushed('r', 1)]))[0]?.duplicate).toBe(false);
    });

    it('finds keys and aliases through delivery; purging the item forgets them', async () => {
      const s = ctx.store();
      const [one, two] = await itemsOf(s, [pushed('r', 1), pushed('r', 2)]);
      const keys = (n: number): string[] => [pushed('r', n).key, ...pushed('r', n).aliases!];
      expect(await s.findKeys('r', [...keys(1), ...keys(2), 'sha256:unknown'])).toEqual(
        new Map([
          [keys(1)[0], one?.id],
          [keys(1)[1], one?.id],
          [keys(2)[0], two?.id],
          [keys(2)[1], two?.id],
        ]),
      );
      expect((await s.findKeys('q', keys(1))).size).toBe(0);
      expect((await s.findKeys('r', [])).size).toBe(0);
      const claimed = await s.claim('r', 10, 'w', 60_000);
      await s.markDelivered([one?.id ?? 0], { outcome: 'delivered' });
      await s.deadLetter(two?.id ?? 0, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' });
      expect(claimed).toHaveLength(2);
      // Delivered (raw bytes dropped): a retry still answers the first item.
      const [retry] = await itemsOf(s, [pushed('r', 1, { key: 'sha256:reencoded|acme/support' })]);
      expect(retry).toMatchObject({ id: one?.id, duplicate: true, status: 'delivered' });
      expect(await s.purgeDeadLetters({ ids: [two?.id ?? 0] })).toBe(1);
      expect((await s.findKeys('r', keys(2))).size).toBe(0);
      expect(await s.pruneDelivered(new Date(Date.now() + 60_000))).toBe(1);
      expect((await s.findKeys('r', keys(1))).size).toBe(0);
    });

    it('finds keys and aliases and, in the same call, begins the parse attempts of the messages it holds nothing of', async () => {
      const s = ctx.store();
      const held = pushed('r', 1);
      const alias = held.aliases![0]!;
      const [one] = await itemsOf(s, [held]);
      await s.countParseAttempts('r', ['counted']);
      const looked = await s.findKeysAndBegin('r', [
        { key: 'new', alias: 'evt-unknown' },
        { key: held.key },
        { key: 'reencoded', alias },
        { key: 'twice' },
        { key: 'counted' },
        { key: 'twice' },
      ]);
      expect(looked.found).toEqual(
        new Map([
          [held.key, one?.id],
          [alias, one?.id],
        ]),
      );
      expect(looked.begun).toEqual(new Set(['new', 'twice']));
      // Held by its key or only by its alias: not counted; counted before: left as it was.
      expect(await s.parseAttempts('r', ['new', 'evt-unknown', held.key, 'reencoded', 'twice', 'counted'])).toEqual(
        new Map([
          ['new', 1],
          ['twice', 1],
          ['counted', 1],
        ]),
      );
      expect(await (await ctx.open()).findKeysAndBegin('q', [{ key: held.key }])).toEqual({ found: new Map(), begun: new Set([held.key]) });
      expect(await s.findKeysAndBegin('r', [])).toEqual({ found: new Map(), begun: new Set() });
    });

    it('stores each message once when writers push the same messages at the same time', async () => {
      const a = ctx.store();
      const b = await ctx.open();
      const batch = Array.from({ length: 50 }, (_, i) => pushed('r', i));
      // Half of one writer's inputs carry only their event id under other bytes: they must still meet the first item.
      const reencoded = batch.map((it, i) => (i % 2 === 0 ? it : { ...it, key: `sha256:re-${i}|acme/support` }));
      const results = await Promise.all([itemsOf(a, batch), itemsOf(b, [...reencoded].reverse()), itemsOf(b, batch)]);
      expect(await a.outboxDepth('r')).toBe(50);
      const ids = results.map((r, w) => (w === 1 ? [...r].reverse() : r).map((o) => o.id));
      expect(ids[1]).toEqual(ids[0]);
      expect(ids[2]).toEqual(ids[0]);
      expect(results.flat().filter((o) => !o.duplicate)).toHaveLength(50);
      expect((await a.counters('r'))[0]?.enqueued).toBe(50);
    });

    it('tells the delivery state of an item', async () => {
      const s = ctx.store();
      const [q, r, d, x] = await itemsOf(s, [pushed('r', 1), pushed('r', 2), pushed('r', 3), pushed('r', 4)]);
      const queued = await s.itemState(q?.id ?? 0);
      expect(queued).toMatchObject({ id: q?.id, route: 'r', key: pushed('r', 1).key, commentId: 'c0de0001', status: 'queued' });
      expect(queued?.attempts).toBe(0);
      expect(queued?.error).toBeUndefined();
      expect(Date.parse(queued?.nextAttemptAt ?? '')).toBeLessThanOrEqual(Date.now() + 1000);
      await s.claim('r', 10, 'w', 60_000);
      await s.scheduleRetry([r?.id ?? 0], 3_600_000, { code: 'MAILGATE_ERR_API_SERVER', message: '503' });
      await s.markDelivered([d?.id ?? 0], { outcome: 'unchanged' });
      await s.deadLetter(x?.id ?? 0, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: '422: bad header' });
      const retrying = await s.itemState(r?.id ?? 0);
      expect(retrying).toMatchObject({ status: 'queued', attempts: 1, error: { code: 'MAILGATE_ERR_API_SERVER', message: '503' } });
      expect(Date.parse(retrying?.nextAttemptAt ?? '')).toBeGreaterThan(Date.now() + 3_000_000);
      const delivered = await s.itemState(d?.id ?? 0);
      expect(delivered).toMatchObject({ status: 'delivered', outcome: 'unchanged' });
      expect(delivered?.nextAttemptAt).toBeUndefined();
      expect(delivered?.finishedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      const dead = await s.itemState(x?.id ?? 0);
      expect(dead).toMatchObject({ status: 'dead', error: { code: 'MAILGATE_ERR_BATCH_REJECTED', message: '422: bad header' } });
      expect(await s.itemState(999_999)).toBeUndefined();
      expect(await s.itemState(Number.NaN)).toBeUndefined();
    });
  });
}
