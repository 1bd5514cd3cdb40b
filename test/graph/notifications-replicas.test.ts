/**
 * A change notification reaching a replica that does not read the mailbox: it finds the mailbox
 * by the subscriptions saved in the shared store and signals it there, and the replica reading
 * the mailbox runs a delta round at its next look (`wake_check_ms`) rather than at its safety
 * poll (ten minutes here, so only the wake-up can explain the delivery).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGraphAdapters } from '../../adapters/graph/index.js';
import { sampleMessage, startGraphStandIn, type GraphStandIn } from '../../adapters/graph/stand-in/index.js';
import type { AcceptOptions, Accepted, Inbound, PushEndpoint } from '../../src/pipeline/types.js';
import { createWakeBoard } from '../../src/pipeline/wake-board.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { entryFor, MemorySink, quiet, until } from './setup.js';

const USERS = ['one@contoso.test', 'two@contoso.test'];
const CLIENT_STATE = 'client-state-0123456789abcdef';
let standIn: GraphStandIn;
let receiver: Server;
let endpoint: PushEndpoint | undefined;
let port: number;
let stop: AbortController;
let store: Store;

/** The owner's intake: checkpoints (the saved subscriptions among them) go to the shared store. */
class StoreSink extends MemorySink {
  override async accept(batch: Inbound[], options: AcceptOptions = {}): Promise<Accepted[]> {
    if (options.checkpoint) await store.setCheckpoint(options.checkpoint.key, options.checkpoint.value);
    return super.accept(batch, options);
  }
}

beforeEach(async () => {
  standIn = await startGraphStandIn();
  for (const u of USERS) standIn.addMailbox(u);
  store = await openStore('sqlite::memory:');
  stop = new AbortController();
  // Graph posts to the replica that does NOT read the mailboxes.
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
      void endpoint!.handle(request, {}).then((r) => {
        res.writeHead(r.status, r.headers ?? {});
        res.end(typeof r.body === 'string' ? r.body : r.body === undefined ? undefined : JSON.stringify(r.body));
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
  await store.close();
});

describe('graph change notifications across replicas', () => {
  /**
   * Two replicas of one entry on one store: `owner` reads the mailboxes, `other` only receives
   * the notifications (its endpoint is the one the stand-in posts to).
   */
  function twoReplicas() {
    const entry = entryFor(standIn, USERS, {
      poll_interval_ms: 600_000,
      wake_check_ms: 100,
      notifications: { url: `http://127.0.0.1:${port}/graph/m365/notifications`, client_state: CLIENT_STATE },
    });
    const owner = createGraphAdapters(entry, { logger: quiet, board: createWakeBoard(store) });
    const other = createGraphAdapters(entry, { logger: quiet, board: createWakeBoard(store) });
    endpoint = other[0]!.endpoints()[0];
    const sink = new StoreSink();
    const done = owner.map((a) => a.start(sink, stop.signal));
    return { owner, other, sink, done };
  }

  it('a notification received by the replica not reading the mailbox wakes the one that does', async () => {
    const { owner, other, sink, done } = twoReplicas();
    await until(() => standIn.subscriptions.all.size === 2, 'the subscriptions');
    await until(() => USERS.every((u) => sink.checkpoints.has(`graph:m365/${u}:subscriptions`)), 'the saved subscriptions');
    await until(() => owner.every((a) => a.health()[0]!.state === 'idle'), 'idle mailboxes');

    standIn.deliver(USERS[0]!, 'inbox', [sampleMessage(1, { mailbox: USERS[0]! })]);
    await until(() => sink.items.size === 1, 'the message notified to the other replica');
    expect(other[0]!.runner.opts.subscriber!.received).toBeGreaterThanOrEqual(1);
    // The saved subscriptions named the mailbox: only it was signalled.
    expect(await store.getCheckpoint(`wake:graph:m365/${USERS[0]}`)).toBeDefined();
    expect(await store.getCheckpoint(`wake:graph:m365/${USERS[1]}`)).toBeUndefined();
    stop.abort();
    await Promise.all(done);
  });

  it('a lifecycle event received by the replica not reading the mailbox reaches the one that does: removed is recreated, reauthorization renews', async () => {
    const { owner, sink, done } = twoReplicas();
    await until(() => USERS.every((u) => sink.checkpoints.has(`graph:m365/${u}:subscriptions`)), 'the saved subscriptions');
    await until(() => owner.every((a) => a.health()[0]!.state === 'idle'), 'idle mailboxes');
    const subOf = (user: string) => [...standIn.subscriptions.all.values()].find((s) => s.resource.includes(user));
    const first = subOf(USERS[0]!)!.id;
    const untouched = subOf(USERS[1]!)!;
    const untouchedExpiry = untouched.expirationDateTime;

    // Only the note on the board explains a new subscription: the renewal is minutes away.
    await standIn.subscriptions.lifecycle(first, 'subscriptionRemoved');
    await until(() => subOf(USERS[0]!) !== undefined && subOf(USERS[0]!)!.id !== first, 'the subscription recreated by the owner');
    const second = subOf(USERS[0]!)!;
    await until(
      () => JSON.stringify(sink.checkpoints.get(`graph:m365/${USERS[0]}:subscriptions`)).includes(second.id),
      'the new one saved',
    );
    const before = second.expirationDateTime;
    await new Promise((r) => setTimeout(r, 20));
    await standIn.subscriptions.lifecycle(second.id, 'reauthorizationRequired');
    await until(() => standIn.subscriptions.all.get(second.id)!.expirationDateTime !== before, 'the subscription renewed by the owner');
    expect(standIn.subscriptions.all.size).toBe(2);
    // The other mailbox's subscription was neither recreated nor renewed.
    expect(subOf(USERS[1]!)).toMatchObject({ id: untouched.id, expirationDateTime: untouchedExpiry });
    stop.abort();
    await Promise.all(done);
  });
});
