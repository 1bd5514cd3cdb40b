/**
 * Change notifications against the stand-in: the receiver (served here by a plain HTTP server)
 * answers the validation handshake, a notification wakes the folder's mailbox, a wrong
 * clientState is refused, and the lifecycle events are handled: `subscriptionRemoved` makes a
 * new subscription, `reauthorizationRequired` renews it, `missed` runs a delta round.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGraphAdapters } from '../../adapters/graph/index.js';
import { sampleMessage, startGraphStandIn, type GraphStandIn } from '../../adapters/graph/stand-in/index.js';
import type { PushEndpoint } from '../../src/pipeline/types.js';
import { entryFor, MemorySink, quiet, until } from './setup.js';

const USER = 'support@contoso.test';
const CLIENT_STATE = 'client-state-0123456789abcdef';
let standIn: GraphStandIn;
let receiver: Server;
let endpoint: PushEndpoint | undefined;
let port: number;
let stop: AbortController;

beforeEach(async () => {
  standIn = await startGraphStandIn();
  standIn.addMailbox(USER);
  stop = new AbortController();
  // The receiver's HTTP side, as the server mounts a push endpoint: exact body bytes in, the answer out.
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (endpoint === undefined || req.method !== endpoint.method || !req.url!.startsWith(endpoint.path)) {
        res.writeHead(404).end();
        return;
      }
      const request = { method: req.method, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
      void endpoint.handle(request, {}).then((r) => {
        res.writeHead(r.status, r.headers ?? {});
        res.end(typeof r.body === 'string' || Buffer.isBuffer(r.body) ? r.body : r.body === undefined ? undefined : JSON.stringify(r.body));
      });
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  port = (receiver.address() as AddressInfo).port;
});
afterEach(async () => {
  stop.abort();
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
  await standIn.close();
});

function start(pollMs = 60_000, sink = new MemorySink(), lifetimeMinutes?: number) {
  const entry = entryFor(standIn, [USER], {
    poll_interval_ms: pollMs,
    notifications: { url: `http://127.0.0.1:${port}/graph/m365/notifications`, client_state: CLIENT_STATE },
  });
  // Shortened below the schema's floor of 45 minutes: the schedule is the same code.
  if (lifetimeMinutes !== undefined) entry.subscription_minutes = lifetimeMinutes;
  const [adapter] = createGraphAdapters(entry, { logger: quiet });
  endpoint = adapter!.endpoints()[0];
  const done = adapter!.start(sink, stop.signal);
  return { adapter: adapter!, sink, done };
}

describe('graph change notifications', () => {
  it('the handshake is answered, a notification wakes the folder, a wrong clientState is refused', async () => {
    const { adapter, sink, done } = start();
    await until(() => standIn.subscriptions.all.size === 1, 'a subscription');
    expect(endpoint).toMatchObject({ method: 'POST', path: '/graph/m365/notifications', public: true });
    expect(standIn.subscriptions.deliveries.filter((d) => d.kind === 'validation').map((d) => d.status)).toEqual([200]);
    standIn.deliver(USER, 'inbox', [sampleMessage(1)]);
    await until(() => sink.items.size === 1, 'the notified message');
    // A forged notification: answered 202, but nothing is woken and it is counted as refused.
    const forged = await fetch(`http://127.0.0.1:${port}/graph/m365/notifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        value: [
          { subscriptionId: [...standIn.subscriptions.all.keys()][0], clientState: 'guess-guess-guess-guess', changeType: 'created' },
        ],
      }),
    });
    expect(forged.status).toBe(202);
    expect(adapter.runner.opts.subscriber!.refused).toBe(1);
    expect(adapter.runner.opts.subscriber!.received).toBeGreaterThanOrEqual(1);
    const sub = [...standIn.subscriptions.all.values()][0]!;
    expect(sub.clientState).toBe(CLIENT_STATE);
    stop.abort();
    await done;
  });

  it('renews the subscription before it expires, when a third of its lifetime is left (the same subscription, no new one)', async () => {
    // A lifetime of 3 s: renewed about 2 s after each renewal; the poll is ten minutes away.
    const { done } = start(600_000, new MemorySink(), 0.05);
    await until(() => standIn.subscriptions.all.size === 1, 'a subscription');
    const [id] = [...standIn.subscriptions.all.keys()];
    const expiries = new Set<string>();
    await until(
      () => {
        const sub = standIn.subscriptions.all.get(id!);
        if (sub !== undefined && Date.parse(sub.expirationDateTime) > Date.now()) expiries.add(sub.expirationDateTime);
        return expiries.size >= 3;
      },
      'two renewals',
      15_000,
    );
    expect([...standIn.subscriptions.all.keys()]).toEqual([id]);
    stop.abort();
    await done;
  });

  it('lifecycle: subscriptionRemoved makes a new one, reauthorizationRequired renews, missed runs a delta round', async () => {
    const { sink, done } = start();
    await until(() => standIn.subscriptions.all.size === 1, 'a subscription');
    const [first] = [...standIn.subscriptions.all.keys()];
    await standIn.subscriptions.lifecycle(first!, 'subscriptionRemoved');
    await until(() => standIn.subscriptions.all.size === 1 && !standIn.subscriptions.all.has(first!), 'a new subscription');
    const [second] = [...standIn.subscriptions.all.keys()];
    const before = standIn.subscriptions.all.get(second!)!.expirationDateTime;
    await new Promise((r) => setTimeout(r, 20));
    await standIn.subscriptions.lifecycle(second!, 'reauthorizationRequired');
    await until(() => standIn.subscriptions.all.get(second!)!.expirationDateTime !== before, 'the renewal');
    // Mail the notification of which was lost: `missed` brings it in.
    standIn.subscriptions.drop = true;
    standIn.deliver(USER, 'inbox', [sampleMessage(2)]);
    await new Promise((r) => setTimeout(r, 200));
    expect(sink.items.size).toBe(0);
    await standIn.subscriptions.lifecycle(second!, 'missed');
    await until(() => sink.items.size === 1, 'the missed message');
    stop.abort();
    await done;
  });

  it('keeps the subscriptions in the store: a restart uses them (no new subscription), and their notifications wake the folder', async () => {
    const sink = new MemorySink();
    const first = start(60_000, sink);
    await until(() => standIn.subscriptions.all.size === 1, 'a subscription');
    const [id] = [...standIn.subscriptions.all.keys()];
    await until(() => sink.checkpoints.has(`graph:m365/${USER}:subscriptions`), 'the saved subscription');
    expect(sink.checkpoints.get(`graph:m365/${USER}:subscriptions`)).toMatchObject({ subscriptions: [{ id }] });
    stop.abort();
    await first.done;
    const created = standIn.subscriptions.deliveries.filter((d) => d.kind === 'validation').length;

    stop = new AbortController();
    const again = start(60_000, sink);
    await until(() => again.adapter.health()[0]!.state === 'idle', 'the restarted mailbox');
    expect([...standIn.subscriptions.all.keys()]).toEqual([id]);
    expect(standIn.subscriptions.deliveries.filter((d) => d.kind === 'validation')).toHaveLength(created);
    const before = again.adapter.runner.opts.subscriber!.received;
    standIn.deliver(USER, 'inbox', [sampleMessage(7)]);
    await until(() => sink.items.size === 1, 'the notified message after the restart');
    expect(again.adapter.runner.opts.subscriber!.received).toBeGreaterThan(before);
    stop.abort();
    await again.done;
  });
});
