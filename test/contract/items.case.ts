/**
 * Contract cases for the console's reads: the item list (states, filters, search, cursor), the
 * delivery attempts written with each outcome, raw bytes, counts and AI units per day.
 */
import { describe, expect, it } from 'vitest';
import { SEARCH_PROBE_LIMIT } from '../../src/store/console.js';
import type { OutboxInput, Store } from '../../src/store/types.js';
import { expectCode, fakeClock, input, type ContractContext } from './store.case.js';

/** Where each input went: the one enqueue's per-input answers. */
const itemsOf = async (s: Pick<Store, 'enqueue'>, items: OutboxInput[]) => (await s.enqueue(items)).items;

const HOUR = 3_600_000;

/** An input with real headers: sender, subject, Message-ID and Date. */
function mail(route: string, n: number, from: string, subject: string, extra: Partial<OutboxInput> = {}): OutboxInput {
  const base = input(route, n, extra);
  const headers = [
    `From: ${from}`,
    `Subject: ${subject}`,
    `Message-ID: <msg-${n}@example.org>`,
    'Date: Tue, 03 Mar 2026 10:15:00 +0000',
  ].join('\r\n');
  return { ...base, document: { ...base.document, raw_email: { ...base.document.raw_email, headers: { raw: headers } } } };
}

export function itemCases(ctx: ContractContext): void {
  describe('console items', () => {
    it('lists items newest first with their search fields, states and a cursor', async () => {
      const s = ctx.store();
      await s.enqueue([
        mail('r', 1, 'Alice Example <Alice@Example.com>', 'Invoice 42'),
        mail('r', 2, 'bob@example.net', '=?UTF-8?B?UsOpc3Vtw6k=?='),
        mail('other', 3, 'carol@example.com', 'Hello'),
      ]);
      const all = await s.listItems({ limit: 10 });
      expect(all.map((i) => i.route)).toEqual(['other', 'r', 'r']);
      expect(all[0]!.id).toBeGreaterThan(all[1]!.id);
      const alice = all[2]!;
      expect(alice).toMatchObject({
        route: 'r',
        state: 'queued',
        sender: 'Alice@Example.com',
        senderName: 'Alice Example',
        subject: 'Invoice 42',
        messageId: 'msg-1@example.org',
        timestamp: '2026-03-03T10:15:00.000Z',
        attempts: 0,
        origin: { adapter: 'files', details: { index: 1 } },
      });
      expect(alice.nextAttemptAt).toMatch(/^\d{4}-/);
      expect(all[1]!.subject).toBe('Résumé');
      const page1 = await s.listItems({ limit: 2 });
      const page2 = await s.listItems({ limit: 2, beforeId: page1.at(-1)!.id });
      expect([...page1, ...page2].map((i) => i.id)).toEqual(all.map((i) => i.id));
      expect(await s.listItems({ limit: 2, beforeId: all.at(-1)!.id })).toEqual([]);
      await expectCode(s.listItems({ limit: 0 }), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
    });

    it('writes the facts intake computed without reading the document (nothing parsed in the write)', async () => {
      const s = ctx.store();
      const facts = {
        sender: 'dora@example.com',
        senderName: 'Dora',
        subject: 'Précis',
        messageId: 'm-9@example.org',
        timestamp: 1_772_532_900_000,
      };
      const encoded = (n: number, route = 'r'): OutboxInput => {
        const base = input(route, n);
        const json = JSON.stringify(base.document);
        const item = { ...base, json: { document: json }, facts } as OutboxInput;
        Object.defineProperty(item, 'document', {
          get: () => {
            throw new Error('the store read the document');
          },
        });
        return item;
      };
      expect(await s.enqueue([encoded(1)])).toMatchObject({ queued: 1 });
      expect(await itemsOf(s, [encoded(2)])).toMatchObject([{ duplicate: false }]);
      const dead = await s.enqueue([{ ...input('r', 3), error: { code: 'MAILGATE_ERR_MIME_INTERNAL', message: 'x' } }]);
      expect(dead.deadLettered).toBe(1);
      const [dl] = await s.listDeadLetters({ limit: 1 });
      await s.replayDeadLetter(dl!.id, encoded(3));
      const listed = await s.listItems({ limit: 10 });
      expect(listed).toHaveLength(3);
      for (const item of listed) {
        expect(item).toMatchObject({ sender: 'dora@example.com', senderName: 'Dora', subject: 'Précis', messageId: 'm-9@example.org' });
        expect(item.timestamp).toBe(new Date(facts.timestamp).toISOString());
      }
      expect((await s.listItems({ limit: 10, q: 'préc' })).map((i) => i.id)).toEqual(listed.map((i) => i.id));
    });

    it('filters by state, route, adapter and time', async () => {
      const clock = fakeClock(Date.parse('2026-03-03T12:00:00Z'));
      const s = await ctx.open({ now: clock.now });
      const files = (n: number) => mail('r', n, 'a@example.com', `s${n}`);
      const hook = (n: number) =>
        mail('r2', n, 'a@example.com', `s${n}`, { origin: { adapter: 'webhook:mailgun', instance: 'in', id: `ev-${n}`, details: {} } });
      await s.enqueue([files(1), files(2), files(3), files(4), hook(5)]);
      clock.advance(HOUR);
      await s.enqueue([files(6), input('r', 7, { error: { code: 'MAILGATE_ERR_MIME_TOO_LARGE', message: 'big' } })]);
      const ids = (await s.listItems({ limit: 10 })).map((i) => i.id).sort((a, b) => a - b);
      const [one, two, three, four] = ids;
      await s.claim('r', 4, 'w', 60_000);
      await s.markDelivered([one!], { outcome: 'delivered' });
      await s.markDelivered([two!], { outcome: 'unchanged' });
      await s.scheduleRetry([three!], 60_000, { code: 'MAILGATE_ERR_API_SERVER', message: '503' });
      await s.deadLetter(four!, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: '422' });
      const idsOf = async (q: Parameters<typeof s.listItems>[0]) => (await s.listItems(q)).map((i) => i.id);
      expect(await idsOf({ limit: 10, state: 'delivered' })).toEqual([one]);
      expect(await idsOf({ limit: 10, state: 'unchanged' })).toEqual([two]);
      expect(await idsOf({ limit: 10, state: 'retrying' })).toEqual([three]);
      expect(await idsOf({ limit: 10, state: 'dead' })).toEqual([ids[6], four]);
      expect(await idsOf({ limit: 10, state: 'queued' })).toEqual([ids[5], ids[4]]);
      expect(await idsOf({ limit: 10, state: 'queued', route: 'r' })).toEqual([ids[5]]);
      expect(await idsOf({ limit: 10, adapter: 'webhook:mailgun' })).toEqual([ids[4]]);
      expect(await idsOf({ limit: 10, adapter: 'webhook:mailgun', account: 'other' })).toEqual([]);
      expect(await idsOf({ limit: 10, adapter: 'webhook:mailgun', account: 'in' })).toEqual([ids[4]]);
      expect(await idsOf({ limit: 2, adapter: 'files', beforeId: ids[3]! })).toEqual([ids[2], ids[1]]);
      expect(await idsOf({ limit: 10, adapter: 'files', state: 'dead' })).toEqual([ids[6], four]);
      // PostgreSQL stamps enqueue times with the server's clock, not the fake one.
      const sixthAt = new Date((await s.listItems({ limit: 1, beforeId: ids[6]! }))[0]!.enqueuedAt);
      expect((await idsOf({ limit: 10, since: sixthAt })).slice(0, 2)).toEqual([ids[6], ids[5]]);
      expect(await idsOf({ limit: 10, until: sixthAt })).not.toContain(ids[5]);
      expect(await idsOf({ limit: 10, until: new Date('2000-01-01T00:00:00Z') })).toEqual([]);
      const [retrying] = await s.listItems({ limit: 1, state: 'retrying' });
      expect(retrying).toMatchObject({ attempts: 1, lastError: { code: 'MAILGATE_ERR_API_SERVER' } });
      expect(Date.parse(retrying!.nextAttemptAt!)).toBe(clock.now() + 60_000);
      const [dead] = await s.listItems({ limit: 1, state: 'dead', route: 'r', beforeId: ids[6] });
      expect(dead).toMatchObject({ id: four, lastError: { code: 'MAILGATE_ERR_BATCH_REJECTED' } });
      expect(dead?.finishedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    });

    it('searches by prefix of sender, name, subject, Message-ID and comment id, case-insensitively', async () => {
      const s = ctx.store();
      await s.enqueue([
        mail('r', 1, 'Alice Example <alice@example.com>', 'Invoice 42'),
        mail('r', 2, 'Bob <bob@example.net>', 'Re: invoice 42'),
        mail('r2', 3, 'carol@example.com', 'Lunch'),
      ]);
      const subjects = async (q: string, route?: string) =>
        (await s.listItems({ limit: 10, q, ...(route ? { route } : {}) })).map((i) => i.subject);
      expect(await subjects('ALICE@')).toEqual(['Invoice 42']);
      expect(await subjects('alice ex')).toEqual(['Invoice 42']);
      expect(await subjects('invoice')).toEqual(['Invoice 42']);
      expect(await subjects('re: inv')).toEqual(['Re: invoice 42']);
      expect(await subjects('<msg-3@example.org>')).toEqual(['Lunch']);
      expect(await subjects('c0de0002')).toEqual(['Re: invoice 42']);
      expect(await subjects('c0de')).toEqual(['Lunch', 'Re: invoice 42', 'Invoice 42']);
      expect(await subjects('c0de', 'r2')).toEqual(['Lunch']);
      expect(await subjects('example')).toEqual([]);
      expect(await subjects('nobody')).toEqual([]);
      await expectCode(s.listItems({ limit: 10, q: '  ' }), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
    });

    it('answers a search with more matches than the probe counts newest first, filtered and paged', async () => {
      const s = ctx.store();
      const n = SEARCH_PROBE_LIMIT + 10;
      const many = Array.from({ length: n }, (_, i) => mail(i % 2 === 0 ? 'r' : 'r2', i + 1, `user${i}@common.example`, `Topic ${i}`));
      await s.enqueue([...many, mail('r', n + 1, 'rare@other.example', 'Topic rare')]);
      const page = await s.listItems({ limit: 3, q: 'user' });
      expect(page.map((i) => i.sender)).toEqual([
        `user${n - 1}@common.example`,
        `user${n - 2}@common.example`,
        `user${n - 3}@common.example`,
      ]);
      const routed = await s.listItems({ limit: 2, q: 'topic', route: 'r', beforeId: page[0]!.id });
      expect(routed.map((i) => [i.route, i.subject])).toEqual([
        ['r', `Topic ${n - 2}`],
        ['r', `Topic ${n - 4}`],
      ]);
      expect((await s.listItems({ limit: 5, q: 'rare@' })).map((i) => i.subject)).toEqual(['Topic rare']);
    });

    it('records each attempt with its outcome, and keeps raw bytes until delivery', async () => {
      const clock = fakeClock(Date.parse('2026-03-03T12:00:00Z'));
      const s = await ctx.open({ now: clock.now });
      await s.enqueue([input('r', 1), input('r', 2)]);
      const [a, b] = await s.claim('r', 2, 'w', 60_000);
      expect((await s.itemRaw(a!.id))?.raw?.toString()).toContain('body 1');
      await s.scheduleRetry([a!.id, b!.id], 1_000, { code: 'MAILGATE_ERR_API_TIMEOUT', message: 'timed out' });
      clock.advance(2_000);
      await s.claim('r', 2, 'w', 60_000);
      await s.markDelivered([a!.id], { outcome: 'delivered', aiUnits: { route: 'r', units: 1 } });
      await s.deadLetter(b!.id, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: '422: bad' });
      expect(await s.itemAttempts(a!.id)).toEqual([
        {
          at: '2026-03-03T12:00:00.000Z',
          outcome: 'retry',
          error: { code: 'MAILGATE_ERR_API_TIMEOUT', message: 'timed out' },
          delayMs: 1000,
        },
        { at: '2026-03-03T12:00:02.000Z', outcome: 'delivered' },
      ]);
      expect((await s.itemAttempts(b!.id)).map((x) => [x.outcome, x.error?.code])).toEqual([
        ['retry', 'MAILGATE_ERR_API_TIMEOUT'],
        ['dead', 'MAILGATE_ERR_BATCH_REJECTED'],
      ]);
      expect(await s.itemRaw(a!.id)).toEqual({ status: 'delivered' });
      expect((await s.itemRaw(b!.id))?.status).toBe('dead');
      expect((await s.itemRaw(b!.id))?.raw?.byteLength).toBeGreaterThan(0);
      expect(await s.itemRaw(999_999)).toBeUndefined();
      expect(await s.attemptCounts(new Date('2026-03-03T12:00:01Z'))).toEqual([
        { route: 'r', outcome: 'dead', count: 1 },
        { route: 'r', outcome: 'delivered', count: 1 },
      ]);
      expect(await s.itemAttempts(999_999)).toEqual([]);
    });

    it('counts items per route, adapter and state, and AI units per day', async () => {
      const clock = fakeClock(Date.parse('2026-03-03T23:00:00Z'));
      const s = await ctx.open({ now: clock.now });
      const hook = { origin: { adapter: 'webhook:mailgun', instance: '', id: 'ev-3', details: {} } };
      await s.enqueue([input('r', 1), input('r', 2), input('r', 3, hook)]);
      const [x] = await s.claim('r', 1, 'w', 60_000);
      await s.markDelivered([x!.id], { outcome: 'delivered', aiUnits: { route: 'r', units: 1 } });
      clock.advance(2 * HOUR);
      await s.addAiUnits('r', 3);
      await s.addAiUnits('r2', 0);
      expect(await s.itemCounts()).toEqual([
        { route: 'r', adapter: 'files', state: 'delivered', count: 1 },
        { route: 'r', adapter: 'files', state: 'queued', count: 1 },
        { route: 'r', adapter: 'webhook:mailgun', state: 'queued', count: 1 },
      ]);
      expect(await s.aiUnitsByDay('2026-03-01')).toEqual([
        { route: 'r', day: '2026-03-03', units: 1 },
        { route: 'r', day: '2026-03-04', units: 3 },
      ]);
      expect(await s.aiUnitsByDay('2026-03-04')).toEqual([{ route: 'r', day: '2026-03-04', units: 3 }]);
      await expectCode(s.aiUnitsByDay('yesterday'), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
    });

    it('finds the items of comment ids, forgets search rows and attempts with their item, and refreshes them on replay', async () => {
      const s = ctx.store();
      await s.enqueue([mail('r', 1, 'a@example.com', 'One'), mail('r', 2, 'b@example.com', 'Two')]);
      const [two, one] = await s.listItems({ limit: 10 });
      expect(await s.itemsByComment('r', ['C0DE0001', 'c0de0002', 'ffff'])).toEqual(
        new Map([
          ['c0de0001', one!.id],
          ['c0de0002', two!.id],
        ]),
      );
      expect(await s.itemsByComment('other', ['c0de0001'])).toEqual(new Map());
      await s.claim('r', 2, 'w', 60_000);
      await s.deadLetter(one!.id, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' });
      await s.replayDeadLetter(one!.id, mail('r', 1, 'z@example.com', 'Replayed'));
      expect((await s.listItems({ limit: 10, q: 'z@' })).map((i) => [i.id, i.subject, i.state])).toEqual([[one!.id, 'Replayed', 'queued']]);
      await s.claim('r', 2, 'w', 60_000);
      await s.deadLetter(one!.id, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'again' });
      expect(await s.purgeDeadLetters({ ids: [one!.id] })).toBe(1);
      expect(await s.listItems({ limit: 10, q: 'z@' })).toEqual([]);
      expect(await s.itemAttempts(one!.id)).toEqual([]);
      const keyed = await itemsOf(s, [
        mail('r', 9, 'pushed@example.com', 'Pushed', {
          key: 'sha256:9',
          origin: { adapter: 'upload', instance: '', id: 'sha256:9', details: {} },
        }),
      ]);
      expect((await s.listItems({ limit: 10, q: 'pushed@' })).map((i) => i.id)).toEqual([keyed[0]!.id]);
    });
  });
}
