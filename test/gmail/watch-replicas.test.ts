/**
 * A Pub/Sub push reaching a replica that does not read the mailbox it names: the mailbox is
 * signalled in the shared store, and the replica reading it runs a history round at its next
 * look (`wake_check_ms`) rather than at its poll (ten minutes here, so only the wake-up can
 * explain the delivery).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGmailAdapters } from '../../adapters/gmail/index.js';
import { sampleMessage, startGmailStandIn, type GmailStandIn } from '../../adapters/gmail/stand-in/index.js';
import { createWakeBoard } from '../../src/pipeline/wake-board.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { entryFor, MemorySink, quiet, until } from './setup.js';

const USER = 'support@example.test';
const AUDIENCE = 'https://mailgate.example.test/gmail/push';
const PUSHER = 'pusher@stand-in-project.iam.gserviceaccount.com';
let standIn: GmailStandIn;
let stop: AbortController;
let store: Store;

beforeEach(async () => {
  standIn = await startGmailStandIn();
  store = await openStore('sqlite::memory:');
  stop = new AbortController();
});
afterEach(async () => {
  stop.abort();
  await standIn.close();
  await store.close();
});

describe('gmail push across replicas', () => {
  it('a push received by the replica not reading the mailbox wakes the one that does', async () => {
    standIn.addMailbox(USER);
    const entry = entryFor(standIn, [USER], {
      poll_interval_ms: 600_000,
      wake_check_ms: 100,
      notifications: { topic: 'projects/p/topics/gmail', audience: AUDIENCE, service_account: PUSHER, certs_url: standIn.certsUrl },
    });
    const [owner] = createGmailAdapters(entry, { logger: quiet, board: createWakeBoard(store) });
    const [other] = createGmailAdapters(entry, { logger: quiet, board: createWakeBoard(store) });
    const sink = new MemorySink();
    const done = owner!.start(sink, stop.signal);
    await until(() => standIn.pubsub.watches === 1 && owner!.health()[0]!.state === 'idle', 'the watch');

    standIn.deliver(USER, [sampleMessage(1)]);
    const endpoint = other!.endpoints()[0]!;
    const note = { emailAddress: USER.toUpperCase(), historyId: 1 };
    const body = Buffer.from(JSON.stringify({ message: { data: Buffer.from(JSON.stringify(note)).toString('base64'), messageId: '1' } }));
    const headers = { authorization: `Bearer ${standIn.identity.pushToken(AUDIENCE, PUSHER, false)}` };
    expect((await endpoint.handle({ method: 'POST', url: endpoint.path, headers, body }, {})).status).toBe(204);
    await until(() => sink.items.size === 1, 'the message pushed to the other replica');
    expect(await store.getCheckpoint(`wake:gmail:workspace/${USER}`)).toBeDefined();
    stop.abort();
    await done;
  });
});
