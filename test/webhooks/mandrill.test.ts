import { describe, expect, it } from 'vitest';
import { providerEntrySchema } from '../../adapters/webhooks/config.js';
import { urlencodedBody } from '../../adapters/webhooks/encode.js';
import { mandrill, mandrillSignature } from '../../adapters/webhooks/mandrill/index.js';
import { NOW, endpointFor, errorCode, sample, toRequest, verifyContext } from './support.js';

const mandrillEntrySchema = providerEntrySchema('mandrill');

const URL_ = 'https://mail.example.com/webhooks/mandrill-in?a=1';
const entry = { name: 'mandrill-in', provider: 'mandrill', route: 'support', webhook_key: 'k3y-Mandrill', url: URL_ } as const;
const config = mandrillEntrySchema.parse(entry);
const raw = sample('plain-utf8.eml');
const envelope = { to: ['support@example.com'] };

function post(events: string, signature?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (signature !== undefined) headers['x-mandrill-signature'] = signature;
  return toRequest({ method: 'POST', headers, body: urlencodedBody([['mandrill_events', events]]) });
}
const signedPost = (events: string) =>
  post(events, mandrillSignature(config.webhook_key, URL_, [['mandrill_events', Buffer.from(events)]]));

describe('mandrill module', () => {
  it('signs url + sorted key/value pairs (HMAC-SHA1, base64), as computed independently with openssl', () => {
    const events = '[{"event":"inbound","msg":{"raw_msg":"Subject: hi\\r\\n\\r\\nbody"}}]';
    expect(mandrillSignature('k3y-Mandrill', URL_, [['mandrill_events', Buffer.from(events)]])).toBe('AQPKZTMHNNfcTv/rxg4UTeByQ1o=');
    // Order of the fields does not matter: they are sorted by key.
    const two = mandrillSignature('k', 'u', [
      ['b', Buffer.from('2')],
      ['a', Buffer.from('1')],
    ]);
    expect(two).toBe(
      mandrillSignature('k', 'u', [
        ['a', Buffer.from('1')],
        ['b', Buffer.from('2')],
      ]),
    );
  });

  it('takes msg.raw_msg of each inbound event, skipping other events', async () => {
    const events = JSON.stringify([
      {
        event: 'inbound',
        _id: 'ev-1',
        msg: {
          raw_msg: raw.toString('utf8'),
          email: 'support@example.com',
          spam_report: { score: 1.5 },
          spf: { result: 'pass' },
          dkim: { signed: true, valid: true },
        },
      },
      { event: 'send', msg: {} },
      { event: 'inbound', msg: { _id: 'msg-2', raw_msg: 'Subject: two\r\n\r\nsecond\r\n', email: 'help@example.com' } },
    ]);
    const req = signedPost(events);
    await mandrill.verify(req, config, verifyContext());
    const msgs = await mandrill.normalize(req, config, verifyContext());
    expect(msgs).toHaveLength(2);
    expect(msgs[0]!.raw.equals(raw)).toBe(true);
    expect(msgs[0]!.eventId).toBe('ev-1');
    expect(msgs[0]!.envelope).toMatchObject({ to: ['support@example.com'], spamScore: 1.5, spf: 'pass', dkim: 'pass' });
    expect(msgs[1]!.eventId).toBe('msg-2');
    expect(msgs[1]!.raw.toString()).toBe('Subject: two\r\n\r\nsecond\r\n');
  });
});

describe('mandrill endpoint', () => {
  it('answers the HEAD probe with 200 and stores nothing', async () => {
    const { endpoints, sink } = endpointFor(entry);
    const head = endpoints.find((e) => e.method === 'HEAD')!;
    expect(head.path).toBe('/webhooks/mandrill-in');
    const res = await head.handle(toRequest({ method: 'HEAD', headers: {}, body: Buffer.alloc(0) }), {});
    expect(res.status).toBe(200);
    expect(sink.batches).toEqual([]);
  });

  it('stores a simulated request, all its messages in one submit', async () => {
    const { send, sink } = endpointFor(entry);
    const res = await send(toRequest(mandrill.simulate(raw, config, { url: URL_, now: NOW, envelope })));
    expect(res.status).toBe(200);
    expect(sink.batches).toHaveLength(1);
    expect(sink.batches[0]![0]!.raw.equals(raw)).toBe(true);
    expect(sink.batches[0]![0]!.origin).toMatchObject({ adapter: 'webhook:mandrill', envelope: { to: ['support@example.com'] } });
  });

  it('refuses unsigned (401), forged or signed-for-another-url (403), malformed (400) requests, storing nothing', async () => {
    const { send, sink } = endpointFor(entry);
    const events = JSON.stringify([{ event: 'inbound', msg: { raw_msg: 'Subject: x\r\n\r\ny' } }]);
    const unsigned = await send(post(events));
    expect([unsigned.status, errorCode(unsigned)]).toEqual([401, 'MAILGATE_ERR_WEBHOOK_UNSIGNED']);
    const forged = await send(post(events, 'AQPKZTMHNNfcTv/rxg4UTeByQ1o='));
    expect([forged.status, errorCode(forged)]).toEqual([403, 'MAILGATE_ERR_WEBHOOK_FORGED']);
    const otherUrl = mandrillSignature(config.webhook_key, 'https://mail.example.com/webhooks/mandrill-in', [
      ['mandrill_events', Buffer.from(events)],
    ]);
    expect((await send(post(events, otherUrl))).status).toBe(403);
    for (const bad of ['{"event":"inbound"}', 'null', '[{"event":"inbound"}]', 'not json', '[1]']) {
      const res = await send(signedPost(bad));
      expect([res.status, errorCode(res)]).toEqual([400, 'MAILGATE_ERR_WEBHOOK_MALFORMED']);
    }
    const good = signedPost(events);
    // Cut at the last escape (%5D, the closing bracket): the signature no longer matches.
    const cut = await send({ ...good, body: good.body.subarray(0, good.body.length - 3) });
    expect([cut.status, errorCode(cut)]).toEqual([403, 'MAILGATE_ERR_WEBHOOK_FORGED']);
    expect(sink.batches).toEqual([]);
  });

  it('answers 413 over the body limit', async () => {
    const { send, sink } = endpointFor({ ...entry, body_limit: 1024 });
    const res = await send(
      toRequest(mandrill.simulate(Buffer.concat([raw, Buffer.alloc(2048, 0x61)]), config, { url: URL_, now: NOW, envelope })),
    );
    expect([res.status, errorCode(res)]).toEqual([413, 'MAILGATE_ERR_WEBHOOK_TOO_LARGE']);
    expect(sink.batches).toEqual([]);
  });

  it('answers 503 with Retry-After when the store fails', async () => {
    const { send, sink } = endpointFor(entry);
    sink.failWith = 'MAILGATE_ERR_INTAKE_UNAVAILABLE';
    const res = await send(toRequest(mandrill.simulate(raw, config, { url: URL_, now: NOW, envelope })));
    expect([res.status, res.headers?.['Retry-After']]).toEqual([503, '8']);
  });
});
