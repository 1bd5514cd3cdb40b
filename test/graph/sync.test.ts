/**
 * Delta rounds of the Graph adapter against the stand-in over HTTP: pages and checkpoints, the
 * immutable-id preference on every request, an expired delta link, throttling honoured, a 403
 * mailbox beside a working one, the token refused mid-sync, and well-known and path folders.
 */
import { describe, expect, it } from 'vitest';
import { createGraphAdapters } from '../../adapters/graph/index.js';
import { ConnectionPacer } from '../../src/pipeline/pacer.js';
import { sampleMessage } from '../../adapters/graph/stand-in/index.js';
import { resolveUserProperties } from '../../src/pipeline/origin.js';
import { entryFor, graphStandInPerTest, MemorySink, quiet, until } from './setup.js';

const t = graphStandInPerTest();

const fill = (user: string, n: number, folder = 'inbox', from = 0) =>
  t.standIn.deliver(
    user,
    folder,
    Array.from({ length: n }, (_, i) =>
      sampleMessage(from + i, { mailbox: user, ...((from + i) % 3 === 0 ? { attachmentBytes: 20_000 } : {}) }),
    ),
  );

function run(entry: ReturnType<typeof entryFor>, sink: MemorySink, pacer?: ConnectionPacer) {
  const adapters = createGraphAdapters(entry, { logger: quiet, ...(pacer ? { pacer } : {}) });
  const done = Promise.all(adapters.map((a) => a.start(sink, t.stop.signal)));
  return { adapters, done };
}

describe('graph adapter: delta rounds', () => {
  it('reads every message once, page by page, with the delta link as checkpoint and ImmutableId on every request', async () => {
    const user = 'support@contoso.test';
    t.standIn.addMailbox(user);
    const ids = fill(user, 57);
    const sink = new MemorySink();
    const { adapters, done } = run(entryFor(t.standIn, [user], { page_size: 10 }), sink);
    await until(() => sink.items.size === 57, '57 messages');
    await until(() => adapters[0]!.health()[0]!.state === 'idle', 'idle');
    expect([...sink.items.values()].map((i) => i.origin.details['eventId']).sort()).toEqual([...ids].sort());
    const cp = sink.checkpoints.get(`graph:m365/${user}:inbox`) as { link: string };
    expect(cp.link).toContain('$deltatoken=');
    const stats = t.standIn.stats(user);
    expect(stats.withoutImmutableId).toBe(0);
    expect(stats.maxInFlight).toBeLessThanOrEqual(4);
    // Attachments never crossed the wire: those messages came through $select/$expand.
    const withAttachment = [...sink.items.values()].filter((i) => i.raw.includes('X-Mailgate-Omitted-Size: 20000'));
    expect(withAttachment).toHaveLength(19);
    const origin = sink.items.get(`graph:m365/${user}:${ids[1]}:0`)!.origin;
    expect(origin).toMatchObject({
      adapter: 'graph',
      details: { mailbox: user, folder: 'inbox', internetMessageId: '<graph-1@mail.example.com>' },
    });
    // New mail: found by the next round (woken here as a notification would).
    fill(user, 3, 'inbox', 100);
    adapters[0]!.runner.wake();
    await until(() => sink.items.size === 60, '60 messages');
    t.stop.abort();
    await done;
  });

  it('an expired delta link starts a full round; the messages keep their keys', async () => {
    const user = 'support@contoso.test';
    t.standIn.addMailbox(user);
    fill(user, 25);
    const sink = new MemorySink();
    const { adapters, done } = run(entryFor(t.standIn, [user], { page_size: 10 }), sink);
    await until(() => adapters[0]!.health()[0]!.state === 'idle' && sink.items.size === 25, 'first round');
    const before = sink.accepted;
    t.standIn.expireDelta(user, 'inbox', 'syncStateNotFound');
    fill(user, 2, 'inbox', 200);
    adapters[0]!.runner.wake();
    await until(() => sink.items.size === 27, 'round after the reset');
    expect(sink.accepted - before).toBe(27);
    t.stop.abort();
    await done;
  });

  it('tells the runtime that deferred after-delivery actions can run on each start, the one after a failure too', async () => {
    const user = 'support@contoso.test';
    t.standIn.addMailbox(user);
    fill(user, 5);
    const sink = new MemorySink();
    sink.failNext = 1;
    const { adapters, done } = run(entryFor(t.standIn, [user]), sink);
    let ready = 0;
    adapters[0]!.onActionsReady(() => (ready += 1));
    await until(() => adapters[0]!.runner.health.failures === 1, 'the failure');
    expect(ready).toBe(1);
    await until(() => sink.items.size === 5 && adapters[0]!.health()[0]!.state === 'idle', 'all after the retry', 30_000);
    expect(ready).toBe(2);
    t.stop.abort();
    await done;
  });

  it('a failing write leaves the checkpoint behind the pages not stored; they are read again after a backoff', async () => {
    const user = 'support@contoso.test';
    t.standIn.addMailbox(user);
    fill(user, 45);
    const sink = new MemorySink();
    sink.failNext = 1;
    const { adapters, done } = run(entryFor(t.standIn, [user], { page_size: 10 }), sink);
    await until(() => adapters[0]!.runner.health.failures === 1, 'the failure');
    // Nothing after the failed write was kept: no folder checkpoint (the mailbox's state record has the error).
    expect(sink.checkpoints.has(`graph:m365/${user}:inbox`)).toBe(false);
    expect(sink.checkpoints.get(`graph:m365/${user}`)).toMatchObject({ state: 'backoff' });
    await until(() => sink.items.size === 45 && adapters[0]!.health()[0]!.state === 'idle', 'all after the retry', 30_000);
    expect((sink.checkpoints.get(`graph:m365/${user}:inbox`) as { link: string }).link).toContain('$deltatoken=');
    expect(sink.checkpoints.get(`graph:m365/${user}`)).toMatchObject({ state: 'ok' });
    t.stop.abort();
    await done;
  });

  it('a 429 burst: nothing is sent before Retry-After, never more than 4 in flight', async () => {
    const user = 'support@contoso.test';
    t.standIn.addMailbox(user);
    fill(user, 60);
    t.standIn.throttle(user, 3, 1);
    const sink = new MemorySink();
    const { adapters, done } = run(entryFor(t.standIn, [user], { page_size: 20 }), sink);
    await until(() => sink.items.size === 60, '60 messages');
    const stats = t.standIn.stats(user);
    expect(stats.throttled).toBeGreaterThanOrEqual(3);
    expect(stats.early).toBe(0);
    expect(stats.maxInFlight).toBeLessThanOrEqual(4);
    expect(adapters[0]!.runner.health.throttled).toBeGreaterThanOrEqual(1);
    t.stop.abort();
    await done;
  });

  it('a 403 mailbox has its own coded error; the mailbox beside it is read; both start through the pacer', async () => {
    t.standIn.addMailbox('ok@contoso.test');
    t.standIn.addMailbox('denied@contoso.test', { forbidden: true });
    fill('ok@contoso.test', 5);
    const sink = new MemorySink();
    const pacer = new ConnectionPacer({ concurrency: 1, perSecond: 100 });
    const { adapters, done } = run(entryFor(t.standIn, ['denied@contoso.test', 'ok@contoso.test']), sink, pacer);
    await until(() => sink.items.size === 5, 'the working mailbox');
    await until(() => adapters[0]!.health()[0]!.lastError !== undefined, 'the error');
    const denied = adapters[0]!.health()[0]!;
    expect(denied).toMatchObject({ ok: false, state: 'backoff', lastError: { code: 'MAILGATE_ERR_GRAPH_FORBIDDEN' } });
    expect(adapters[1]!.health()[0]).toMatchObject({ ok: true });
    // Each mailbox's start took a permit, one at a time.
    expect(pacer.grants).toBeGreaterThanOrEqual(2);
    expect(pacer.peakInFlight).toBe(1);
    t.stop.abort();
    await done;
  });

  it('a token refused mid-sync is renewed once and the sync goes on; refused again it is MAILGATE_ERR_GRAPH_UNAUTHORIZED', async () => {
    const user = 'support@contoso.test';
    t.standIn.addMailbox(user);
    fill(user, 30);
    const sink = new MemorySink();
    const { adapters, done } = run(entryFor(t.standIn, [user], { page_size: 10 }), sink);
    await until(() => sink.items.size === 30, 'the first round');
    // The token expires between rounds (a fast machine finishes a round before a test could expire
    // it in the middle): the next round's first request is refused, renewed once, and goes on.
    t.standIn.identity.expireAll();
    fill(user, 12, 'inbox', 200);
    adapters[0]!.runner.wake();
    await until(() => sink.items.size === 42, 'all after the renewal');
    expect(adapters[0]!.runner.opts.client.stats.renewals).toBeGreaterThanOrEqual(1);
    t.standIn.refuseTokens(2);
    fill(user, 1, 'inbox', 300);
    adapters[0]!.runner.wake();
    await until(() => adapters[0]!.health()[0]!.lastError !== undefined, 'the 401 error');
    expect(adapters[0]!.health()[0]!.lastError!.code).toBe('MAILGATE_ERR_GRAPH_UNAUTHORIZED');
    t.stop.abort();
    await done;
  });

  it('folders by well-known name and by path; a missing path is MAILGATE_ERR_GRAPH_NOT_FOUND', async () => {
    const user = 'support@contoso.test';
    t.standIn.addMailbox(user);
    fill(user, 2, 'inbox/Support/Tier 2');
    fill(user, 3, 'archive', 10);
    const sink = new MemorySink();
    const entry = entryFor(t.standIn, [user]);
    entry.mailboxes[0]!.folders = ['inbox/Support/Tier 2', 'archive'];
    const { done } = run(entry, sink);
    await until(() => sink.items.size === 5, 'both folders');
    expect(new Set([...sink.items.values()].map((i) => i.origin.details['folder']))).toEqual(new Set(['inbox/Support/Tier 2', 'archive']));
    t.stop.abort();
    await done;
    const missing = entryFor(t.standIn, [user]);
    missing.mailboxes[0]!.folders = ['inbox/Nope'];
    t.stop = new AbortController();
    const second = run(missing, new MemorySink());
    await until(() => second.adapters[0]!.health()[0]!.lastError !== undefined, 'the error');
    expect(second.adapters[0]!.health()[0]!.lastError!.code).toBe('MAILGATE_ERR_GRAPH_NOT_FOUND');
  });
});

describe('graph adapter: after delivery', () => {
  it('read and category: applied by immutable id in $batch; the changes do not bring the messages back', async () => {
    const user = 'support@contoso.test';
    t.standIn.addMailbox(user);
    const ids = fill(user, 6);
    for (const action of ['read', 'category:Mailgate']) {
      const sink = new MemorySink();
      const { adapters, done } = run(entryFor(t.standIn, [user], { after_delivery: action }), sink);
      await until(() => sink.items.size === 6 && adapters[0]!.health()[0]!.state === 'idle', 'the first round');
      const origins = [...sink.items.values()].map((i) => i.origin);
      expect([...sink.items.values()].every((i) => i.afterDelivery === true)).toBe(true);
      const res = await adapters[0]!.afterDelivery(origins);
      expect(res.applied).toHaveLength(6);
      for (const id of ids) {
        const m = t.standIn.find(user, id)!;
        if (action === 'read') expect(m.isRead).toBe(true);
        else expect(m.categories).toEqual(['Mailgate']);
      }
      // A repeat (a crash between the action and its bookkeeping) changes nothing.
      expect((await adapters[0]!.afterDelivery(origins)).applied).toHaveLength(6);
      const before = t.standIn.stats(user).requests;
      adapters[0]!.runner.wake();
      await until(() => t.standIn.stats(user).requests > before && adapters[0]!.health()[0]!.state === 'idle', 'a round');
      // One delta request, no content read: updates are not arrivals.
      expect(t.standIn.stats(user).requests - before).toBe(1);
      expect(sink.accepted).toBe(6);
      t.stop.abort();
      await done;
      t.stop = new AbortController();
    }
  });
});

describe('graph adapter: move to a folder that does not exist', () => {
  it('is MAILGATE_ERR_GRAPH_MOVE_FOLDER in the mailbox status, the actions finished unapplied (not due forever); once the folder exists, later messages move', async () => {
    const user = 'support@contoso.test';
    t.standIn.addMailbox(user);
    fill(user, 3);
    const sink = new MemorySink();
    const { adapters, done } = run(entryFor(t.standIn, [user], { after_delivery: 'move:inbox/Handled' }), sink);
    await until(() => sink.items.size === 3 && adapters[0]!.health()[0]!.state === 'idle', 'the first round');
    const origins = [...sink.items.values()].map((i) => i.origin);
    const res = await adapters[0]!.afterDelivery(origins);
    // Skipped, not deferred: the queue finishes them instead of retrying them for ever.
    expect(res).toMatchObject({ applied: [], skipped: origins });
    expect(res.deferred ?? []).toEqual([]);
    const line = adapters[0]!.health()[0]!;
    expect(line.ok).toBe(true);
    expect(line.detail!['actionError']).toMatchObject({ code: 'MAILGATE_ERR_GRAPH_MOVE_FOLDER', skipped: 3 });
    expect((line.detail!['actionError'] as { message: string }).message).toMatch(/"inbox\/Handled"/);
    expect(t.standIn.count(user, 'inbox')).toBe(3);
    t.standIn.deliver(user, 'inbox/Handled', []);
    expect((await adapters[0]!.afterDelivery(origins)).applied).toHaveLength(3);
    expect(t.standIn.count(user, 'inbox/Handled')).toBe(3);
    expect(adapters[0]!.health()[0]!.detail!['actionError']).toBeUndefined();
    t.stop.abort();
    await done;
  });
});

describe('graph adapter: origin', () => {
  it('fills {mailbox}, {folder} and {account} in route properties with the mailbox, the folder as configured and the instance', async () => {
    const user = 'help@contoso.test';
    t.standIn.addMailbox(user);
    fill(user, 1);
    const sink = new MemorySink();
    const { adapters, done } = run(entryFor(t.standIn, [user]), sink);
    await until(() => sink.items.size === 1 && adapters[0]!.health()[0]!.state === 'idle', 'the first round');
    const [item] = [...sink.items.values()];
    const props = resolveUserProperties(
      { 'string:Mailbox': '{mailbox}', 'string:Folder': '{folder}', 'string:Account': '{account}' },
      item!.origin,
    );
    expect(props).toEqual({ 'string:Mailbox': user, 'string:Folder': 'inbox', 'string:Account': `m365/${user}` });
    t.stop.abort();
    await done;
  });
});
