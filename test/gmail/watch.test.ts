/**
 * users.watch and the push endpoint of the Gmail adapter against the stand-in: the watch is made
 * after the first round and renewed on its schedule (shortened here from a day), and a push is
 * acted on only when its OIDC token verifies (signature by the configured certificate URL's key,
 * audience, service account); a refused one wakes nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createGmailAdapters } from '../../adapters/gmail/index.js';
import { GatewayError } from '../../src/errors.js';
import type { PushEndpoint } from '../../src/pipeline/types.js';
import { sampleMessage } from '../../adapters/gmail/stand-in/index.js';
import { entryFor, gmailStandInPerTest, MemorySink, quiet, until } from './setup.js';

const t = gmailStandInPerTest();
let receiver: Server | undefined;

// Runs before the stand-in's own clean-up (after-hooks run last-registered first).
afterEach(async () => {
  receiver?.closeAllConnections();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  receiver = undefined;
});

/** Serves the adapter's push endpoint over HTTP and points the stand-in's Pub/Sub push subscription at it. */
async function receive(endpoint: PushEndpoint): Promise<void> {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
      void endpoint.handle(request, {}).then((r) => {
        res.writeHead(r.status, r.headers ?? {});
        res.end(r.body === undefined ? undefined : JSON.stringify(r.body));
      });
    });
  });
  await new Promise<void>((r) => receiver!.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as AddressInfo).port;
  t.standIn.pubsub.target = { endpoint: `http://127.0.0.1:${port}${endpoint.path}`, audience: AUDIENCE, serviceAccount: PUSHER };
}

/**
 * A pass-through to the stand-in that forwards every request but keeps the answers to
 * users.watch from the caller (until it gives up on them): a watch Gmail made whose answer is
 * still on its way.
 */
async function holdingWatchAnswers(target: string): Promise<{ url: string; waiting: () => number; close: () => Promise<void> }> {
  let waiting = 0;
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = { ...req.headers } as Record<string, string>;
      delete headers['host'];
      void fetch(new URL(req.url!, target), { method: req.method!, headers, body: chunks.length ? Buffer.concat(chunks) : undefined })
        .then(async (answer) => {
          const body = Buffer.from(await answer.arrayBuffer());
          if (req.method === 'POST' && req.url!.endsWith('/watch')) {
            waiting += 1;
            res.on('close', () => (waiting -= 1));
            return;
          }
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          res.end(body);
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    waiting: () => waiting,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise<void>((r) => proxy.close(() => r()));
    },
  };
}

const USER = 'support@example.test';
const AUDIENCE = 'https://mailgate.example.test/gmail/push';
const PUSHER = 'pusher@stand-in-project.iam.gserviceaccount.com';

function start(more: Record<string, unknown> = {}) {
  const entry = entryFor(t.standIn, [USER], {
    poll_interval_ms: 600_000,
    notifications: { topic: 'projects/p/topics/gmail', audience: AUDIENCE, service_account: PUSHER, certs_url: t.standIn.certsUrl },
    ...more,
  });
  return entry;
}

describe('gmail watch and push', () => {
  it('renews the watch on its schedule', async () => {
    t.standIn.addMailbox(USER);
    const entry = start();
    // Shortened from a day (the schema's floor is a minute): the schedule is the same code.
    entry.watch_renew_ms = 300;
    const sink = new MemorySink();
    const [adapter] = createGmailAdapters(entry, { logger: quiet });
    void adapter!.start(sink, t.stop.signal);
    await until(() => t.standIn.pubsub.watches >= 4, 'four watches');
    expect(t.standIn.mailbox(USER).watch).toMatchObject({ topic: 'projects/p/topics/gmail', labelIds: ['INBOX'] });
  });

  it('a push wakes the mailbox only when its token verifies', async () => {
    t.standIn.addMailbox(USER);
    const sink = new MemorySink();
    const [adapter] = createGmailAdapters(start(), { logger: quiet });
    void adapter!.start(sink, t.stop.signal);
    await until(() => t.standIn.pubsub.watches === 1, 'the watch');
    const endpoint = adapter!.endpoints()[0]!;
    const post = async (forged?: 'signature' | 'audience' | 'account') => {
      const note = { emailAddress: USER, historyId: 1 };
      const token = t.standIn.identity.pushToken(
        forged === 'audience' ? 'https://elsewhere.example/' : AUDIENCE,
        forged === 'account' ? 'other@example.test' : PUSHER,
        forged === 'signature',
      );
      const body = Buffer.from(JSON.stringify({ message: { data: Buffer.from(JSON.stringify(note)).toString('base64'), messageId: '1' } }));
      const headers = { authorization: `Bearer ${token}` };
      return endpoint.handle({ method: 'POST', url: endpoint.path, headers, body }, {});
    };
    for (const forged of ['signature', 'audience', 'account'] as const) expect((await post(forged)).status).toBe(401);
    expect(endpoint.authorize!({ method: 'POST', url: endpoint.path, headers: {} })?.status).toBe(401);
    expect(adapter!.runner.health.pushes).toBe(0);
    t.standIn.deliver(USER, [sampleMessage(1)]);
    expect((await post()).status).toBe(204);
    expect(adapter!.runner.health.pushes).toBe(1);
    await until(() => sink.items.size === 1, 'the pushed message');
  });

  it('a watch that lapsed: the poll still finds new mail, and the renewal watches again so pushes resume', async () => {
    t.standIn.addMailbox(USER);
    const entry = start({ poll_interval_ms: 1000 });
    entry.watch_renew_ms = 1500;
    const sink = new MemorySink();
    const [adapter] = createGmailAdapters(entry, { logger: quiet });
    await receive(adapter!.endpoints()[0]!);
    void adapter!.start(sink, t.stop.signal);
    await until(() => t.standIn.pubsub.watches === 1 && adapter!.health()[0]!.state === 'idle', 'the watch');
    const pushed = () => t.standIn.pubsub.deliveries.filter((d) => d.status === 204).length;

    t.standIn.lapseWatch(USER);
    const published = t.standIn.pubsub.published;
    t.standIn.deliver(USER, [sampleMessage(1)]);
    await until(() => sink.items.size === 1, 'the message found by the poll');
    // Nothing was pushed for it: only the poll can have found it.
    expect(t.standIn.pubsub.published).toBe(published);
    expect(pushed()).toBe(0);

    await until(() => t.standIn.pubsub.watches >= 2, 'the watch renewed');
    expect(t.standIn.mailbox(USER).watch!.expiration).toBeGreaterThan(Date.now());
    t.standIn.deliver(USER, [sampleMessage(2)]);
    await until(() => pushed() >= 1 && sink.items.size === 2, 'the message pushed after the renewal');
  });

  it('stopping the mailbox stops its watch (users.stop), after proving it still holds the mailbox', async () => {
    t.standIn.addMailbox(USER);
    const sink = new MemorySink();
    const [adapter] = createGmailAdapters(start(), { logger: quiet });
    const done = adapter!.start(sink, t.stop.signal);
    await until(() => t.standIn.pubsub.watches === 1 && adapter!.health()[0]!.state === 'idle', 'the watch');
    expect(t.standIn.mailbox(USER).watch).toBeDefined();
    t.stop.abort();
    await done;
    expect(t.standIn.mailbox(USER).watch).toBeUndefined();
    expect(sink.checkpoints.get(`gmail:workspace/${USER}:watch`)).toMatchObject({ stoppedAt: expect.any(String) });
  });

  it('stopping while users.watch is in flight still stops the watch Gmail made', async () => {
    t.standIn.addMailbox(USER);
    const held = await holdingWatchAnswers(t.standIn.url);
    try {
      const sink = new MemorySink();
      const [adapter] = createGmailAdapters({ ...start(), api_url: held.url }, { logger: quiet });
      const done = adapter!.start(sink, t.stop.signal);
      // Gmail has the watch; its answer has not reached the adapter.
      await until(() => t.standIn.pubsub.watches === 1 && held.waiting() === 1, 'the watch made, its answer held');
      t.stop.abort();
      await done;
      expect(t.standIn.mailbox(USER).watch).toBeUndefined();
      expect(sink.checkpoints.get(`gmail:workspace/${USER}:watch`)).toMatchObject({ stoppedAt: expect.any(String) });
    } finally {
      await held.close();
    }
  });

  it('a replica that lost the mailbox (its fenced write refused) leaves the watch to the one that took it', async () => {
    t.standIn.addMailbox(USER);
    let fenced = false;
    const sink = new (class extends MemorySink {
      override async accept(...args: Parameters<MemorySink['accept']>) {
        if (fenced) throw new GatewayError('MAILGATE_ERR_STORE_FENCED', 'another replica holds the lease');
        return super.accept(...args);
      }
    })();
    const [adapter] = createGmailAdapters(start(), { logger: quiet });
    const done = adapter!.start(sink, t.stop.signal);
    await until(() => t.standIn.pubsub.watches === 1 && adapter!.health()[0]!.state === 'idle', 'the watch');
    fenced = true;
    t.stop.abort();
    await done;
    expect(t.standIn.mailbox(USER).watch).toBeDefined();
  });
});
