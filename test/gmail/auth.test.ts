/**
 * Tokens and mailbox errors of the Gmail adapter against the stand-in: the key file's token_uri
 * is where the JWT-bearer assertion goes (and what it names as its audience), the refresh-token
 * form, one renewal after a 401, and each lasting failure its own code — 401 after renewal,
 * Gmail not enabled for the user, a label that does not exist.
 */
import { describe, expect, it } from 'vitest';
import { createGmailAdapters } from '../../adapters/gmail/index.js';
import { gmailEntrySchema } from '../../adapters/gmail/config.js';
import { sampleMessage } from '../../adapters/gmail/stand-in/index.js';
import { entryFor, gmailStandInPerTest, MemorySink, quiet, until } from './setup.js';

const t = gmailStandInPerTest();

const USER = 'support@example.test';

function run(entry: ReturnType<typeof entryFor>, sink: MemorySink) {
  const adapters = createGmailAdapters(entry, { logger: quiet });
  void Promise.all(adapters.map((a) => a.start(sink, t.stop.signal)));
  return adapters;
}

describe('gmail tokens and mailbox errors', () => {
  it("the JWT-bearer grant goes to the key file's token_uri, one token per impersonated user", async () => {
    t.standIn.addMailbox(USER);
    t.standIn.addMailbox('billing@example.test');
    t.standIn.deliver(USER, [sampleMessage(1)]);
    t.standIn.deliver('billing@example.test', [sampleMessage(2)]);
    const sink = new MemorySink();
    run(entryFor(t.standIn, [USER, 'billing@example.test']), sink);
    await until(() => sink.items.size === 2, 'both mailboxes read');
    // The stand-in verifies the assertion's signature and that its aud is its own token URL.
    expect(t.standIn.identity.issued).toBe(2);
    expect(t.standIn.identity.refused).toBe(0);
    expect(t.standIn.http.token).toBe(2);
  });

  it('the refresh-token form reads the consenting user as `me`', async () => {
    t.standIn.addMailbox(USER);
    t.standIn.deliver(USER, [sampleMessage(1), sampleMessage(2)]);
    t.standIn.identity.refreshClients.push({
      clientId: 'cid.apps.googleusercontent.com',
      clientSecret: 'shh',
      refreshToken: '1//refresh',
      user: USER,
    });
    const entry = gmailEntrySchema.parse({
      name: 'one',
      route: 'support',
      auth: {
        client_id: 'cid.apps.googleusercontent.com',
        client_secret: 'shh',
        refresh_token: '1//refresh',
        token_url: t.standIn.tokenUrl,
      },
      api_url: t.standIn.url,
      mailboxes: [{ user: 'me' }],
    });
    const sink = new MemorySink();
    run(entry, sink);
    await until(() => sink.items.size === 2, 'two messages');
    expect(t.standIn.identity.issued).toBe(1);
  });

  it('a 401 on a valid token: one renewal and the round goes on; 401 again after renewal: its own code', async () => {
    t.standIn.addMailbox(USER);
    t.standIn.deliver(USER, [sampleMessage(1)]);
    t.standIn.refuseTokens(1);
    const sink = new MemorySink();
    const adapters = run(entryFor(t.standIn, [USER]), sink);
    await until(() => sink.items.size === 1, 'read after one renewal');
    expect(t.standIn.identity.issued).toBe(2);
    t.standIn.refuseTokens(1000);
    t.standIn.deliver(USER, [sampleMessage(2)]);
    adapters[0]!.runner.wake();
    await until(() => adapters[0]!.health()[0]!.lastError !== undefined, 'the error');
    expect(adapters[0]!.health()[0]!.lastError!.code).toBe('MAILGATE_ERR_GMAIL_UNAUTHORIZED');
  });

  it('Gmail not enabled for the user and a label that does not exist: each its own code', async () => {
    t.standIn.addMailbox('nogmail@example.test', { forbidden: true });
    t.standIn.addMailbox(USER);
    const sink = new MemorySink();
    const entry = entryFor(t.standIn, ['nogmail@example.test']);
    entry.mailboxes.push({
      user: USER,
      labels: ['No Such Label'],
      exclude_labels: [],
      skip: [],
      enabled: true,
      disable_after_ms: 86_400_000,
    });
    const adapters = run(entry, sink);
    await until(() => adapters.every((a) => a.health()[0]!.lastError !== undefined), 'both errors');
    expect(adapters.map((a) => a.health()[0]!.lastError!.code)).toEqual(['MAILGATE_ERR_GMAIL_FORBIDDEN', 'MAILGATE_ERR_GMAIL_NOT_FOUND']);
  });
});
