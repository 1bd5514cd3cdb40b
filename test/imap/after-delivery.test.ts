import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImapAdapter } from '../../adapters/imap/index.js';
import { AccountRunner } from '../../adapters/imap/account.js';
import { parseImapAccount } from '../../adapters/imap/config.js';
import { createLogger } from '../../src/logger.js';
import type { Origin } from '../../src/pipeline/types.js';
import { createAfterDeliveryQueue } from '../../src/pipeline/after-delivery.js';
import { openStore } from '../../src/store/index.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { textMessage } from './messages.js';
import { MemorySink, eventually } from './memory-sink.js';
import { account, closedPort, newUser, run } from './setup.js';
import { imapOrigin } from '../../adapters/imap/identity.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

async function flagsOf(user: string, folder: string): Promise<Map<number, Set<string>>> {
  return server.withClient(user, async (c) => {
    await c.mailboxOpen(folder, { readOnly: true });
    const out = new Map<number, Set<string>>();
    for (const m of await c.fetchAll('1:*', { uid: true, flags: true }, { uid: true })) out.set(m.uid, m.flags ?? new Set());
    return out;
  });
}

async function synced(action: string, count = 4): Promise<{ user: string; sink: MemorySink; r: ReturnType<typeof run> }> {
  const { user, pass } = await newUser(server);
  await server.append(
    user,
    'INBOX',
    Array.from({ length: count }, (_, i) => textMessage(i + 1)),
  );
  const sink = new MemorySink();
  const r = run([account(server, user, pass, { after_delivery: action })], sink);
  await eventually(() => sink.accepted.length === count && r.adapter.accountHealth()[0]!.state === 'idle');
  return { user, sink, r };
}

describe('after-delivery actions', () => {
  it('reading never marks anything \\Seen (BODY.PEEK only), and `seen` marks only the origins passed', async () => {
    const { user, sink, r } = await synced('seen');
    expect([...(await flagsOf(user, 'INBOX')).values()].every((f) => !f.has('\\Seen'))).toBe(true);
    const delivered = sink.accepted.filter((m) => m.origin.details['uid'] === 1 || m.origin.details['uid'] === 3).map((m) => m.origin);
    const res = await r.adapter.afterDelivery(delivered);
    await r.stop();
    expect(res.applied).toHaveLength(2);
    const flags = await flagsOf(user, 'INBOX');
    expect([...flags].filter(([, f]) => f.has('\\Seen')).map(([uid]) => uid)).toEqual([1, 3]);
  });

  it('`flag:<keyword>` adds the keyword to the origins passed only', async () => {
    const { user, sink, r } = await synced('flag:Mailgate_Done');
    const res = await r.adapter.afterDelivery([sink.accepted[1]!.origin]);
    await r.stop();
    expect(res.applied).toHaveLength(1);
    const flags = await flagsOf(user, 'INBOX');
    expect([...flags].filter(([, f]) => f.has('Mailgate_Done')).map(([uid]) => uid)).toEqual([2]);
  });

  it('`move:<folder>` moves the origins passed (creating the folder) and nothing else', async () => {
    const { user, sink, r } = await synced('move:Processed');
    const res = await r.adapter.afterDelivery([sink.accepted[0]!.origin, sink.accepted[3]!.origin]);
    // The adapter keeps running: moved mail is not read again from INBOX.
    await server.append(user, 'INBOX', [textMessage(9, 'after the move')]);
    await eventually(() => sink.accepted.length === 5);
    await r.stop();
    expect(res.applied).toHaveLength(2);
    expect([...(await flagsOf(user, 'INBOX')).keys()]).toEqual([2, 3, 5]);
    expect((await flagsOf(user, 'Processed')).size).toBe(2);
    expect(sink.tally()).toEqual({ distinct: 5, twice: 0 });
  });

  it('runs between the chunks of a long backfill instead of waiting for its end', async () => {
    const { user, pass } = await newUser(server);
    server.fillMaildir(
      user,
      'INBOX',
      Array.from({ length: 1000 }, (_, i) => textMessage(i)),
    );
    const sink = new MemorySink();
    let action: Promise<unknown> | undefined;
    let acceptedWhenDone = -1;
    sink.onAccept = () => {
      if (action === undefined && sink.accepted.length > 0) {
        action = r.adapter
          .afterDelivery(sink.accepted.slice(0, 10).map((m) => m.origin))
          .then(() => (acceptedWhenDone = sink.accepted.length));
      }
    };
    const r = run([account(server, user, pass, { after_delivery: 'seen', batch_size: 50 })], sink);
    await eventually(() => sink.accepted.length === 1000 && acceptedWhenDone >= 0);
    await r.stop();
    expect(acceptedWhenDone).toBeLessThan(1000);
    const seen = [...(await flagsOf(user, 'INBOX'))].filter(([, f]) => f.has('\\Seen')).map(([uid]) => uid);
    expect(seen).toEqual(sink.accepted.slice(0, 10).map((m) => m.origin.details['uid']));
  });

  it('skips origins read under another UIDVALIDITY and origins of other accounts or adapters', async () => {
    const { user, sink, r } = await synced('seen', 2);
    const first = sink.accepted[0]!.origin;
    const stale: Origin = { ...first, details: { ...first.details, uidValidity: 12345 } };
    const other: Origin = { ...sink.accepted[1]!.origin, instance: 'someone-else' };
    const file: Origin = { adapter: 'files', instance: '', id: '/tmp/x.eml:0', details: { path: '/tmp/x.eml', index: 0 } };
    const res = await r.adapter.afterDelivery([stale, other, file]);
    await r.stop();
    expect(res.applied).toEqual([]);
    expect(res.skipped).toEqual([stale, other, file]);
    expect([...(await flagsOf(user, 'INBOX')).values()].every((f) => !f.has('\\Seen'))).toBe(true);
  });

  it('returns the origins of an account that cannot connect as deferred, at once while it is in backoff', async () => {
    const { user } = await newUser(server);
    const sink = new MemorySink();
    const r = run([{ ...account(server, user, 'wrong'), after_delivery: 'seen' }], sink, { actionWaitMs: 600_000 });
    await eventually(() => r.adapter.accountHealth()[0]!.state === 'auth_failed');
    const origin = imapOrigin(user, 'INBOX', 1, 1);
    const res = await r.adapter.afterDelivery([origin]);
    await r.stop();
    expect(res).toEqual({ applied: [], skipped: [], deferred: [origin] });
  });
});

describe('after-delivery actions of a mailbox that comes back', () => {
  it('tells the runtime each time the account connects again, so actions deferred during the outage run at once', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'INBOX', [textMessage(1)]);
    const sink = new MemorySink();
    const backoff = { transient: { baseMs: 100, capMs: 500 }, throttle: { baseMs: 200, capMs: 1000 }, auth: { baseMs: 200, capMs: 1000 } };
    const r = run([account(server, user, pass, { after_delivery: 'seen' })], sink, { backoff });
    let ready = 0;
    r.adapter.onActionsReady(() => (ready += 1));
    await eventually(() => ready === 1 && r.adapter.accountHealth()[0]!.state === 'idle');
    // The server ends the account's session: the account reconnects and says so.
    await server.kick(user);
    await eventually(() => ready === 2 && r.adapter.accountHealth()[0]!.state === 'idle');
    await r.stop();
    expect(ready).toBe(2);
  });

  it('an action whose command never answers fails as soon as its connection closes, and holds up nothing of the next connection', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'INBOX', [textMessage(1)]);
    const backoff = { transient: { baseMs: 100, capMs: 500 } };
    // A deadline far beyond the test's: only the connection's close can end the stuck action.
    const config = parseImapAccount(account(server, user, pass, { after_delivery: 'seen', command_timeout_ms: 600_000 }));
    const runner = new AccountRunner(config, { random: () => 0.5, backoff });
    let connected = 0;
    runner.onConnected = () => (connected += 1);
    const sink = new MemorySink();
    const ctl = new AbortController();
    const done = runner.run(sink, ctl.signal);
    try {
      await eventually(() => sink.accepted.length === 1 && runner.health().state === 'idle');
      // What imapflow can leave behind when the socket closes under a command: a promise that never settles.
      const stuck = runner.withSession(10_000, () => new Promise<never>(() => undefined));
      const failed = stuck.then(
        () => undefined,
        (err: unknown) => err,
      );
      await server.kick(user);
      expect(await failed).toMatchObject({ code: 'MAILGATE_ERR_IMAP_CONNECTION' });
      // The next connection syncs, idles and runs actions at once.
      await server.append(user, 'INBOX', [textMessage(2)]);
      await eventually(
        () => connected === 2 && sink.accepted.length === 2 && runner.health().state === 'idle',
        20_000,
        'the next connection synced',
      );
      expect(await runner.withSession(10_000, async (client) => (await client.noop(), 'answered'))).toBe('answered');
    } finally {
      ctl.abort();
      await done;
    }
  });
});

describe('after-delivery actions of a mailbox this process does not read', () => {
  it('are deferred at once, without waiting for a connection, while the account is not run here (another replica holds its lease)', async () => {
    const { user, pass } = await newUser(server);
    const [uid] = await server.append(user, 'INBOX', [textMessage(1)]);
    // Built, never started: what a replica holds for a mailbox another one reads.
    const standby = new ImapAdapter([account(server, user, pass, { after_delivery: 'seen' })], { actionWaitMs: 600_000 });
    const origin = imapOrigin(user, 'INBOX', 1, uid!);
    expect(await standby.afterDelivery([origin])).toEqual({ applied: [], skipped: [], deferred: [origin] });
    expect([...(await flagsOf(user, 'INBOX')).values()].every((f) => !f.has('\\Seen'))).toBe(true);
  });
});

describe('after-delivery actions with one account down', () => {
  it("applies and finishes the actions of the reachable account; the unreachable one's stay due", async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'INBOX', [textMessage(1), textMessage(2), textMessage(3)]);
    const down = {
      name: 'down',
      route: 'support',
      host: '127.0.0.1',
      port: await closedPort(),
      secure: false,
      auth: { user: 'x', pass: 'y' },
      after_delivery: 'seen',
    };
    const sink = new MemorySink();
    // The unreachable account is listed first: it must not block the reachable one.
    const r = run([down, account(server, user, pass, { after_delivery: 'seen' })], sink, {
      actionWaitMs: 600_000,
      backoff: { transient: { baseMs: 60_000, capMs: 60_000 } },
    });
    await eventually(
      () =>
        sink.accepted.length === 3 && r.adapter.accountHealth()[1]!.state === 'idle' && r.adapter.accountHealth()[0]!.state === 'backoff',
    );
    const dir = mkdtempSync(join(tmpdir(), 'mailgate-actions-'));
    const store = await openStore(`sqlite:${join(dir, 'm.db')}`);
    try {
      const lost = imapOrigin('down', 'INBOX', 7, 1);
      const origins = [lost, ...sink.accepted.map((m) => m.origin)];
      const doc = { raw_email: { headers: { raw: 'Subject: x' }, body: { plain: 'x' } } };
      await store.enqueue(
        origins.map((origin, i) => ({ route: 'support', key: `k${i}`, commentId: `c${i}`, document: doc, origin, afterDelivery: true })),
      );
      const items = await store.claim('support', 10, 'w', 60_000);
      await store.markDelivered(
        items.map((i) => i.id),
        { outcome: 'delivered' },
      );

      const queue = createAfterDeliveryQueue(r.adapter, store, createLogger(false), { baseDelayMs: 100, maxDelayMs: 200 });
      await eventually(async () => (await store.pendingActions(10)).length === 1, 20_000, "the reachable account's actions finished");
      const force = new AbortController();
      const closed = queue.close(force.signal);
      force.abort();
      await closed;
      expect((await store.pendingActions(10)).map((d) => d.origin)).toEqual([lost]);
      expect(queue.applied).toBe(3);
      const flags = await flagsOf(user, 'INBOX');
      expect([...flags.values()].every((f) => f.has('\\Seen'))).toBe(true);
    } finally {
      await r.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
