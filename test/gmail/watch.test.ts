/**
 * users.watch and the push endpoint of the Gmail adapter against the stand-in: the watch is made
 * after the first round and renewed on its schedule (shortened here from a day), and a push is
 * acted on only when its OIDC token verifies (signature by the configured certificate URL's key,
 * audience, service account); a refused one wakes nothing.
 */
import { describe, expect, it } from 'vitest';
import { createGmailAdapters } from '../../adapters/gmail/index.js';
import { sampleMessage } from '../../adapters/gmail/stand-in/index.js';
import { entryFor, gmailStandInPerTest, MemorySink, quiet, until } from './setup.js';

const t = gmailStandInPerTest();

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
});
