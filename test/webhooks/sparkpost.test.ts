import { describe, expect, it } from 'vitest';
import { providerEntrySchema } from '../../adapters/webhooks/config.js';
import { sparkpost } from '../../adapters/webhooks/sparkpost/index.js';
import { NOW, endpointFor, errorCode, sample, toRequest, verifyContext } from './support.js';

const sparkpostEntrySchema = providerEntrySchema('sparkpost');

const entry = { name: 'sparkpost-in', provider: 'sparkpost', route: 'support', auth_token: 'sp-token-5' } as const;
const config = sparkpostEntrySchema.parse(entry);
const raw = sample('charset-latin1-c1.eml');
const envelope = { from: 'bounce@example.org', to: ['support@example.com'] };
const json = (payload: unknown, token: string | null = 'sp-token-5') =>
  toRequest({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { 'x-messagesystems-webhook-token': token }) },
    body: Buffer.from(JSON.stringify(payload)),
  });

describe('sparkpost module', () => {
  it('decodes base64 email_rfc822 to the exact bytes, and takes text email_rfc822 as UTF-8; pings are skipped', async () => {
    const payload = [
      { msys: {} },
      {
        msys: {
          relay_message: {
            protocol: 'smtp',
            rcpt_to: 'support@example.com',
            msg_from: 'bounce@example.org',
            customer_id: 1337,
            content: { email_rfc822: raw.toString('base64'), email_rfc822_is_base64: true },
          },
        },
      },
      {
        msys: {
          relay_message: {
            rcpt_to: 'help@example.com',
            content: { email_rfc822: 'Subject: caf\u00e9\r\n\r\nx\r\n', email_rfc822_is_base64: false },
          },
        },
      },
    ];
    const req = json(payload);
    await sparkpost.verify(req, config, verifyContext());
    const msgs = await sparkpost.normalize(req, config, verifyContext());
    expect(msgs).toHaveLength(2);
    expect(msgs[0]!.raw.equals(raw)).toBe(true);
    expect(msgs[0]!.envelope).toEqual({
      provider: 'sparkpost',
      to: ['support@example.com'],
      from: 'bounce@example.org',
      extra: { customer_id: '1337' },
    });
    expect(msgs[1]!.raw.equals(Buffer.from('Subject: café\r\n\r\nx\r\n', 'utf8'))).toBe(true);
  });
});

describe('sparkpost endpoint', () => {
  it('stores a simulated request', async () => {
    const { send, sink } = endpointFor(entry);
    const res = await send(toRequest(sparkpost.simulate(raw, config, { url: 'https://x/', now: NOW, envelope })));
    expect(res.status).toBe(200);
    expect(sink.batches[0]![0]!.raw.equals(raw)).toBe(true);
    expect(sink.batches[0]![0]!.origin).toMatchObject({ adapter: 'webhook:sparkpost', instance: 'sparkpost-in', envelope: envelope });
  });

  it('answers 200 to a batch of pings without submitting anything', async () => {
    const { send, sink } = endpointFor(entry);
    expect((await send(json([{ msys: {} }]))).status).toBe(200);
    expect(sink.batches).toEqual([]);
  });

  it('refuses a missing token (401), a wrong token (403), non-smtp (422), broken payloads (400), storing nothing', async () => {
    const { send, sink } = endpointFor(entry);
    const good = [{ msys: { relay_message: { content: { email_rfc822: 'Subject: x\r\n\r\ny' } } } }];
    const cases: Array<[ReturnType<typeof json>, number, string]> = [
      [json(good, null), 401, 'MAILGATE_ERR_WEBHOOK_UNSIGNED'],
      [json(good, 'sp-token-6'), 403, 'MAILGATE_ERR_WEBHOOK_FORGED'],
      [json([{ msys: { relay_message: { protocol: 'http', content: { email_rfc822: 'x' } } } }]), 422, 'MAILGATE_ERR_WEBHOOK_UNSUPPORTED'],
      [json({ msys: {} }), 400, 'MAILGATE_ERR_WEBHOOK_MALFORMED'],
      [json([{ msys: { relay_message: { content: {} } } }]), 400, 'MAILGATE_ERR_WEBHOOK_MALFORMED'],
      [
        json([{ msys: { relay_message: { content: { email_rfc822: '!!not base64!!', email_rfc822_is_base64: true } } } }]),
        400,
        'MAILGATE_ERR_WEBHOOK_MALFORMED',
      ],
    ];
    for (const [req, status, code] of cases) {
      const res = await send(req);
      expect([res.status, errorCode(res)]).toEqual([status, code]);
    }
    const truncated = json(good);
    const cut = await send({ ...truncated, body: truncated.body.subarray(0, 20) });
    expect([cut.status, errorCode(cut)]).toEqual([400, 'MAILGATE_ERR_WEBHOOK_MALFORMED']);
    expect(sink.batches).toEqual([]);
  });

  it('answers 413 over the body limit and 503 when the store is full', async () => {
    const { send, sink } = endpointFor({ ...entry, body_limit: 1024 });
    const big = await send(
      toRequest(sparkpost.simulate(Buffer.concat([raw, Buffer.alloc(2048, 0x61)]), config, { url: 'https://x/', now: NOW, envelope })),
    );
    expect([big.status, errorCode(big)]).toEqual([413, 'MAILGATE_ERR_WEBHOOK_TOO_LARGE']);
    sink.failWith = 'MAILGATE_ERR_INTAKE_OUTBOX_FULL';
    const full = await send(json([{ msys: { relay_message: { content: { email_rfc822: 'Subject: x\r\n\r\ny' } } } }]));
    expect([full.status, full.headers?.['Retry-After'], errorCode(full)]).toEqual([503, '8', 'MAILGATE_ERR_INTAKE_OUTBOX_FULL']);
  });
});
