/**
 * Rounds of the Gmail adapter against the stand-in over HTTP: a first listing page by page with
 * the cursor checkpoint, then history; large messages with attachments through format=full;
 * batches of at most 50; the per-user quota held; an expired historyId re-listed; a rate-limit
 * burst backed off; a mailbox without delegation beside a working one.
 */
import { describe, expect, it } from 'vitest';
import { createGmailAdapters } from '../../adapters/gmail/index.js';
import { sampleMessage } from '../../adapters/gmail/stand-in/index.js';
import { resolveUserProperties } from '../../src/pipeline/origin.js';
import { entryFor, gmailStandInPerTest, MemorySink, quiet, until } from './setup.js';

const t = gmailStandInPerTest();

const USER = 'support@example.test';

const fill = (user: string, n: number, from = 0, big = 0) =>
  t.standIn.deliver(
    user,
    Array.from({ length: n }, (_, i) =>
      sampleMessage(from + i, { mailbox: user, ...((from + i) % 3 === 0 ? { attachmentBytes: big > 0 ? big : 20_000 } : {}) }),
    ),
  );

function run(entry: ReturnType<typeof entryFor>, sink: MemorySink) {
  const adapters = createGmailAdapters(entry, { logger: quiet });
  const done = Promise.all(adapters.map((a) => a.start(sink, t.stop.signal)));
  return { adapters, done };
}

describe('gmail adapter: rounds', () => {
  it('lists every message once page by page, then reads history; large ones with attachments through format=full', async () => {
    t.standIn.addMailbox(USER);
    const ids = fill(USER, 57, 0, 60_000);
    const sink = new MemorySink();
    const { adapters } = run(entryFor(t.standIn, [USER], { page_size: 10, full_format_over_bytes: 50_000 }), sink);
    await until(() => sink.items.size === 57, '57 messages');
    await until(() => adapters[0]!.health()[0]!.state === 'idle', 'idle');
    expect([...sink.items.values()].map((i) => i.origin.details['eventId']).sort()).toEqual([...ids].sort());
    const cursor = sink.checkpoints.get(`gmail:workspace/${USER}:cursor`) as { phase: string; historyId: string };
    expect(cursor.phase).toBe('history');
    const full = [...sink.items.values()].filter((i) => i.raw.includes('X-Mailgate-Omitted-Size: 60000'));
    expect(full).toHaveLength(19);
    const origin = sink.items.get(`gmail:workspace/${USER}:${ids[1]}:0`)!.origin;
    expect(origin).toMatchObject({
      adapter: 'gmail',
      id: ids[1],
      details: { threadId: ids[1], mailbox: USER, labels: expect.arrayContaining(['INBOX']), internetMessageId: '<sample-1@example.com>' },
    });
    expect(t.standIn.maxBatch).toBeLessThanOrEqual(50);
    // New mail: the next round reads it from history (woken as a push would).
    fill(USER, 3, 100);
    adapters[0]!.runner.wake();
    await until(() => sink.items.size === 60, '3 more');
    expect(t.standIn.stats(USER).overLimit).toBe(0);
    expect(t.standIn.stats(USER).maxUnitsPerSecond).toBeLessThanOrEqual(250);
  }, 30_000);

  it('an expired historyId: the labels are listed again since the last checkpoint, nothing lost', async () => {
    t.standIn.addMailbox(USER);
    fill(USER, 12);
    const sink = new MemorySink();
    const { adapters } = run(entryFor(t.standIn, [USER]), sink);
    await until(() => sink.items.size === 12 && adapters[0]!.health()[0]!.state === 'idle', 'first round');
    t.standIn.expireHistory(USER);
    fill(USER, 4, 50);
    adapters[0]!.runner.wake();
    await until(() => sink.items.size === 16, 'the 4 new after the reset');
    // Listed again: the 12 already stored came again (same keys), so the sink received more than 16.
    expect(sink.accepted).toBeGreaterThan(16);
  }, 30_000);

  it('a rate-limit burst (429 and 403 userRateLimitExceeded) is backed off and everything read', async () => {
    t.standIn.addMailbox(USER);
    fill(USER, 30);
    t.standIn.rateLimit(USER, { count: 2, status: 429, reason: 'rateLimitExceeded' });
    const sink = new MemorySink();
    const { adapters } = run(entryFor(t.standIn, [USER]), sink);
    await until(() => sink.items.size === 30, '30 messages');
    t.standIn.rateLimit(USER, { count: 2, status: 403, reason: 'userRateLimitExceeded' });
    fill(USER, 5, 100);
    adapters[0]!.runner.wake();
    await until(() => sink.items.size === 35, '35 messages');
    expect(adapters[0]!.runner.health.rateLimited).toBeGreaterThanOrEqual(2);
    expect(adapters[0]!.runner.health.lastError).toBeUndefined();
  }, 30_000);

  it('a mailbox without delegation beside a working one: its own coded error; the other read', async () => {
    t.standIn.addMailbox('nodelegation@example.test', { delegated: false });
    t.standIn.addMailbox(USER);
    fill(USER, 5);
    const sink = new MemorySink();
    const { adapters } = run(entryFor(t.standIn, ['nodelegation@example.test', USER]), sink);
    await until(() => sink.items.size === 5, '5 messages');
    await until(() => adapters[0]!.health()[0]!.lastError !== undefined, 'the error');
    expect(adapters[0]!.health()[0]).toMatchObject({ ok: false, state: 'backoff', lastError: { code: 'MAILGATE_ERR_GMAIL_DELEGATION' } });
    expect(sink.checkpoints.get('gmail:workspace/nodelegation@example.test')).toMatchObject({
      error: { code: 'MAILGATE_ERR_GMAIL_DELEGATION' },
    });
    expect(adapters[1]!.health()[0]).toMatchObject({ ok: true });
  }, 30_000);
});

describe('gmail adapter: labels and actions', () => {
  it('a message given a read label later (labelAdded) is read; one in another label is not', async () => {
    t.standIn.addMailbox(USER);
    const sink = new MemorySink();
    const entry = entryFor(t.standIn, [USER]);
    entry.mailboxes[0]!.labels = ['Support'];
    const mb = t.standIn.mailbox(USER);
    mb.createLabel('Support');
    const [inSupport] = t.standIn.deliver(USER, [sampleMessage(1)], ['INBOX', 'Support']);
    const [elsewhere] = t.standIn.deliver(USER, [sampleMessage(2)], ['INBOX']);
    const { adapters } = run(entry, sink);
    await until(() => sink.items.size === 1 && adapters[0]!.health()[0]!.state === 'idle', 'the Support message');
    expect([...sink.items.values()][0]!.origin).toMatchObject({
      id: inSupport,
      details: { eventId: inSupport, labels: expect.arrayContaining(['Support', 'INBOX']) },
    });
    mb.modify(mb.messages.get(elsewhere!)!, [mb.label('Support')], []);
    adapters[0]!.runner.wake();
    await until(() => sink.items.size === 2, 'the relabelled message');
  }, 30_000);

  it('after delivery: read removes UNREAD, label:<name> creates and adds the label, in one batchModify each', async () => {
    t.standIn.addMailbox(USER);
    const ids = fill(USER, 3);
    for (const [action, check] of [
      ['read', (l: Set<string>) => !l.has('UNREAD')],
      ['label:Done', (l: Set<string>) => l.has(t.standIn.mailbox(USER).label('Done'))],
    ] as const) {
      const sink = new MemorySink();
      const { adapters } = run(entryFor(t.standIn, [USER], { after_delivery: action }), sink);
      await until(() => sink.items.size === 3, 'read');
      const result = await adapters[0]!.afterDelivery([...sink.items.values()].map((i) => i.origin));
      expect(result.applied).toHaveLength(3);
      expect(ids.every((id) => check(t.standIn.mailbox(USER).messages.get(id)!.labelIds))).toBe(true);
    }
  }, 30_000);
});

describe('gmail adapter: origin', () => {
  it('fills {mailbox}, {labels} and {account} in route properties with the mailbox, every label of the message by name and the instance', async () => {
    t.standIn.addMailbox(USER);
    const mb = t.standIn.mailbox(USER);
    mb.createLabel('Support');
    t.standIn.deliver(USER, [sampleMessage(1)], ['INBOX', 'Support']);
    const sink = new MemorySink();
    const entry = entryFor(t.standIn, [USER]);
    entry.mailboxes[0]!.labels = ['Support'];
    const { adapters, done } = run(entry, sink);
    await until(() => sink.items.size === 1 && adapters[0]!.health()[0]!.state === 'idle', 'the first round');
    const [item] = [...sink.items.values()];
    const props = resolveUserProperties(
      { 'string:Mailbox': '{mailbox}', 'string:Labels': '{labels}', 'string:Account': '{account}' },
      item!.origin,
    );
    expect(props['string:Mailbox']).toBe(USER);
    expect(String(props['string:Labels']).split(',').sort()).toEqual(['INBOX', 'Support', 'UNREAD']);
    expect(props['string:Account']).toBe(`workspace/${USER}`);
    t.stop.abort();
    await done;
  });
});
