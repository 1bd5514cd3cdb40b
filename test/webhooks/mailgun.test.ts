import { describe, expect, it } from 'vitest';
import { providerEntrySchema } from '../../adapters/webhooks/config.js';
import { multipartBody, urlencodedBody } from '../../adapters/webhooks/encode.js';
import { mailgun, mailgunSignature } from '../../adapters/webhooks/mailgun/index.js';
import { NOW, endpointFor, errorCode, sample, toRequest, verifyContext } from './support.js';

const mailgunEntrySchema = providerEntrySchema('mailgun');

const KEY = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';
const entry = { name: 'mailgun-in', provider: 'mailgun', route: 'support', signing_key: KEY } as const;
const config = mailgunEntrySchema.parse(entry);
const raw = sample('raw-8bit-headers.eml');
const envelope = { from: 'bounce@example.org', to: ['support@example.com'] };
const simulate = (now = NOW) => toRequest(mailgun.simulate(raw, config, { url: 'https://x/webhooks/mailgun-in', now, envelope }));

/** A urlencoded Mailgun POST with the given timestamp, token and body-mime, signed with `key`. */
function signed(fields: { timestamp: string; token: string; key?: string; extra?: Array<[string, string | Buffer]> }) {
  const signature = mailgunSignature(fields.key ?? KEY, fields.timestamp, fields.token);
  const body = urlencodedBody([
    ['body-mime', raw],
    ['recipient', 'support@example.com'],
    ...(fields.extra ?? []),
    ['timestamp', fields.timestamp],
    ['token', fields.token],
    ['signature', signature],
  ]);
  return toRequest({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
}

describe('mailgun module', () => {
  it('computes the known-answer signature of the Rails ActionMailbox test vector', () => {
    expect(
      mailgunSignature(
        'tbsy84uSV1Kt3ZJZELY2TmShPRs91E3yL4tzf96297vBCkDWgL',
        '1539112500',
        '7VwW7k6Ak7zcTwoSoNm7aTtbk1g67MKAnsYLfUB7PdszbgR5Xi',
      ),
    ).toBe('ef24c5225322217bb065b80bb54eb4f9206d764e3e16abab07f0a64d1cf477cc');
  });

  it('verifies the known-answer vector inside its window', async () => {
    const vector = mailgunEntrySchema.parse({ ...entry, signing_key: 'tbsy84uSV1Kt3ZJZELY2TmShPRs91E3yL4tzf96297vBCkDWgL' });
    const req = signed({ timestamp: '1539112500', token: '7VwW7k6Ak7zcTwoSoNm7aTtbk1g67MKAnsYLfUB7PdszbgR5Xi', key: vector.signing_key });
    await expect(mailgun.verify(req, vector, verifyContext(1539112500_000 + 60_000))).resolves.toBeUndefined();
  });

  it('takes body-mime as the exact bytes with recipient and sender as the envelope, and no event id', async () => {
    const req = simulate();
    await mailgun.verify(req, config, verifyContext());
    const [m] = await mailgun.normalize(req, config, verifyContext());
    expect(m!.raw.equals(raw)).toBe(true);
    expect(m!.envelope).toEqual({ provider: 'mailgun', to: ['support@example.com'], from: 'bounce@example.org' });
    expect(m!.eventId).toBeUndefined();
  });

  it('reads body-mime from a multipart POST too', async () => {
    const timestamp = String(NOW / 1000);
    const { body, boundary } = multipartBody(
      [
        { name: 'body-mime', value: raw },
        { name: 'timestamp', value: timestamp },
        { name: 'token', value: 't'.repeat(50) },
        { name: 'signature', value: mailgunSignature(KEY, timestamp, 't'.repeat(50)) },
      ],
      'boundary-mg',
    );
    const req = toRequest({ method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
    await mailgun.verify(req, config, verifyContext());
    expect((await mailgun.normalize(req, config, verifyContext()))[0]!.raw.equals(raw)).toBe(true);
  });

  it('uses the last timestamp, token and signature when a field repeats', async () => {
    const good = signed({
      timestamp: String(NOW / 1000),
      token: 'b'.repeat(50),
      extra: [
        ['timestamp', '1'],
        ['token', 'x'],
        ['signature', 'f'.repeat(64)],
      ],
    });
    await expect(mailgun.verify(good, config, verifyContext())).resolves.toBeUndefined();
  });
});

describe('mailgun endpoint', () => {
  it('stores a genuine request and answers 200', async () => {
    const { send, sink } = endpointFor(entry);
    const res = await send(simulate());
    expect(res.status).toBe(200);
    expect(sink.batches[0]![0]!.raw.equals(raw)).toBe(true);
    expect(sink.batches[0]![0]!.origin).toMatchObject({ adapter: 'webhook:mailgun', instance: 'mailgun-in' });
  });

  it('answers 406 (Mailgun stops retrying) to unsigned, forged, stale and replayed requests, storing nothing', async () => {
    const { send, sink } = endpointFor(entry);
    const ts = String(NOW / 1000);
    const cases: Array<[ReturnType<typeof signed>, string]> = [
      [
        toRequest({
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: urlencodedBody([['body-mime', raw]]),
        }),
        'MAILGATE_ERR_WEBHOOK_UNSIGNED',
      ],
      [signed({ timestamp: ts, token: 'c'.repeat(50), key: 'another-key' }), 'MAILGATE_ERR_WEBHOOK_FORGED'],
      [signed({ timestamp: String(NOW / 1000 - 301), token: 'd'.repeat(50) }), 'MAILGATE_ERR_WEBHOOK_REPLAYED'],
      [signed({ timestamp: String(NOW / 1000 + 301), token: 'e'.repeat(50) }), 'MAILGATE_ERR_WEBHOOK_REPLAYED'],
    ];
    for (const [req, code] of cases) {
      const res = await send(req);
      expect([res.status, errorCode(res)]).toEqual([406, code]);
    }
    const once = signed({ timestamp: ts, token: 'f'.repeat(50) });
    expect((await send(once)).status).toBe(200);
    const replay = await send(signed({ timestamp: ts, token: 'f'.repeat(50) }));
    expect([replay.status, errorCode(replay)]).toEqual([406, 'MAILGATE_ERR_WEBHOOK_REPLAYED']);
    expect(sink.batches).toHaveLength(1);
  });

  it('lets the retry of a request that could not be stored through (its token is forgotten)', async () => {
    const { send, sink } = endpointFor(entry);
    const req = signed({ timestamp: String(NOW / 1000), token: 'g'.repeat(50) });
    sink.failWith = 'MAILGATE_ERR_INTAKE_UNAVAILABLE';
    const res = await send(req);
    expect([res.status, res.headers?.['Retry-After']]).toEqual([503, '8']);
    sink.failWith = undefined;
    expect((await send(signed({ timestamp: String(NOW / 1000), token: 'g'.repeat(50) }))).status).toBe(200);
  });

  it('refuses store() notifications and parsed-mode posts as unsupported (406)', async () => {
    const { send, sink } = endpointFor(entry);
    const ts = String(NOW / 1000);
    const store = signed({
      timestamp: ts,
      token: 'h'.repeat(50),
      extra: [['message-url', 'https://api.mailgun.net/v3/domains/x/messages/y']],
    });
    const stored = await send(store);
    expect([stored.status, errorCode(stored)]).toEqual([406, 'MAILGATE_ERR_WEBHOOK_UNSUPPORTED']);
    const sig = mailgunSignature(KEY, ts, 'i'.repeat(50));
    const parsedBody = urlencodedBody([
      ['body-plain', 'hi'],
      ['timestamp', ts],
      ['token', 'i'.repeat(50)],
      ['signature', sig],
    ]);
    const parsed = await send(
      toRequest({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: parsedBody }),
    );
    expect([parsed.status, errorCode(parsed)]).toEqual([406, 'MAILGATE_ERR_WEBHOOK_UNSUPPORTED']);
    expect(sink.batches).toEqual([]);
  });

  it('answers 400 (retried) to a body that is not a form and 413 over the body limit', async () => {
    const { send, sink } = endpointFor({ ...entry, body_limit: 2048 });
    const json = await send(toRequest({ method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') }));
    expect([json.status, errorCode(json)]).toEqual([400, 'MAILGATE_ERR_WEBHOOK_MALFORMED']);
    const big = await send(signed({ timestamp: String(NOW / 1000), token: 'j'.repeat(50), extra: [['pad', 'x'.repeat(4096)]] }));
    expect([big.status, errorCode(big)]).toEqual([413, 'MAILGATE_ERR_WEBHOOK_TOO_LARGE']);
    expect(sink.batches).toEqual([]);
  });

  it('refuses a truncated body (the signature fields cut off) without storing', async () => {
    const { send, sink } = endpointFor(entry);
    const req = simulate();
    const res = await send({ ...req, body: req.body.subarray(0, req.body.length - 30) });
    expect(res.status).toBe(406);
    expect(sink.batches).toEqual([]);
  });
});
