import { describe, expect, it } from 'vitest';
import { providerEntrySchema } from '../../adapters/webhooks/config.js';
import { postmark } from '../../adapters/webhooks/postmark/index.js';
import { parseMessage } from '../../src/mime/parse.js';
import { NOW, endpointFor, errorCode, sample, toRequest, verifyContext } from './support.js';

const postmarkEntrySchema = providerEntrySchema('postmark');

const entry = { name: 'postmark-in', provider: 'postmark', route: 'support', basic_auth: { user: 'pm', pass: 'pm-pass-7' } } as const;
const config = postmarkEntrySchema.parse(entry);
const raw = sample('plain-utf8.eml');
const envelope = { from: 'bounce@example.org', to: ['support@example.com'] };
const auth = `Basic ${Buffer.from('pm:pm-pass-7').toString('base64')}`;
const json = (payload: unknown, authorization = auth) =>
  toRequest({ method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: Buffer.from(JSON.stringify(payload)) });

/** A payload as Postmark sends it without RawEmail (the parsed fields only). */
const parsedPayload = {
  From: 'anna@example.org',
  FromName: 'Anna Müller',
  FromFull: { Email: 'anna@example.org', Name: 'Anna Müller', MailboxHash: '' },
  To: 'support@example.com',
  ToFull: [{ Email: 'support@example.com', Name: '', MailboxHash: '' }],
  OriginalRecipient: 'support+abc@example.com',
  Subject: 'Grüße aus Köln',
  MessageID: '22c74902-a0c1-4511-804f-341342852c90',
  Date: 'Thu, 5 Apr 2012 16:59:01 +0200',
  MailboxHash: 'abc',
  TextBody: 'Hallo, schöne Grüße\n',
  HtmlBody: '<p>Hallo</p>',
  Tag: '',
  Headers: [
    { Name: 'Return-Path', Value: '<bounce@example.org>' },
    { Name: 'X-Spam-Status', Value: 'No' },
    { Name: 'X-Spam-Score', Value: '-0.1' },
    { Name: 'Message-ID', Value: '<abc@example.org>' },
    { Name: 'MIME-Version', Value: '1.0' },
  ],
  Attachments: [{ Name: 'a.txt', Content: Buffer.from('attached\n').toString('base64'), ContentType: 'text/plain', ContentLength: 9 }],
};

describe('postmark module', () => {
  it('takes RawEmail as the UTF-8 bytes of the JSON string, MessageID as event id, OriginalRecipient as envelope', async () => {
    const req = toRequest(postmark.simulate(raw, config, { url: 'https://x/', now: NOW, envelope }));
    await postmark.verify(req, config, verifyContext());
    const [m] = await postmark.normalize(req, config, verifyContext());
    expect(m!.raw.equals(raw)).toBe(true);
    expect(m!.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(m!.envelope).toMatchObject({ provider: 'postmark', from: 'bounce@example.org', to: ['support@example.com'] });
  });

  it('rebuilds the message from the parsed fields when RawEmail is absent', async () => {
    const [m] = await postmark.normalize(json(parsedPayload), config, verifyContext());
    const parsed = parseMessage(m!.raw);
    const head = m!.raw.toString('latin1');
    expect(head).not.toMatch(/^Return-Path/m);
    expect(head).toContain('Message-ID: <abc@example.org>');
    expect(head).toContain('From: =?UTF-8?B?');
    expect(parsed.headers.find((h) => h.name.toLowerCase() === 'subject')).toBeDefined();
    expect(parsed.text).toBe('Hallo, schöne Grüße\n'.replace('\n', parsed.text!.endsWith('\r\n') ? '\r\n' : '\n'));
    expect(parsed.attachments).toEqual([expect.objectContaining({ name: 'a.txt', size: 9 })]);
    expect(m!.eventId).toBe('22c74902-a0c1-4511-804f-341342852c90');
    expect(m!.envelope).toMatchObject({
      to: ['support+abc@example.com'],
      from: 'bounce@example.org',
      spamVerdict: 'No',
      spamScore: -0.1,
      extra: { MailboxHash: 'abc' },
    });
  });

  it('reads attachments of the dashboard "Check" payload, which says Data instead of Content', async () => {
    const check = {
      ...parsedPayload,
      Attachments: [{ Name: 'b.txt', Data: Buffer.from('data\n').toString('base64'), ContentType: 'text/plain' }],
    };
    const [m] = await postmark.normalize(json(check), config, verifyContext());
    expect(parseMessage(m!.raw).attachments).toEqual([expect.objectContaining({ name: 'b.txt', size: 5 })]);
  });
});

describe('postmark endpoint', () => {
  it('stores a genuine request with the Postmark MessageID as event id', async () => {
    const { send, sink } = endpointFor(entry);
    const res = await send(toRequest(postmark.simulate(raw, config, { url: 'https://x/', now: NOW, envelope })));
    expect(res.status).toBe(200);
    const [m] = sink.batches[0]!;
    expect(m!.raw.equals(raw)).toBe(true);
    expect(m!.origin).toMatchObject({ adapter: 'webhook:postmark', instance: 'postmark-in', details: { eventId: expect.any(String) } });
  });

  it('answers 403 (Postmark stops retrying) to unsigned and forged requests', async () => {
    const { send, sink } = endpointFor(entry);
    const none = await send(json(parsedPayload, ''));
    expect([none.status, errorCode(none)]).toEqual([403, 'MAILGATE_ERR_WEBHOOK_UNSIGNED']);
    const forged = await send(json(parsedPayload, `Basic ${Buffer.from('pm:wrong').toString('base64')}`));
    expect([forged.status, errorCode(forged)]).toEqual([403, 'MAILGATE_ERR_WEBHOOK_FORGED']);
    expect(sink.batches).toEqual([]);
  });

  it('answers 400 (retried) to a truncated or shapeless body, 413 over the limit, 503 when the store fails', async () => {
    const { send, sink } = endpointFor({ ...entry, body_limit: 4096 });
    const req = json(parsedPayload);
    const cut = await send({ ...req, body: req.body.subarray(0, 100) });
    expect([cut.status, errorCode(cut)]).toEqual([400, 'MAILGATE_ERR_WEBHOOK_MALFORMED']);
    const shapeless = await send(json({ hello: 'world' }));
    expect([shapeless.status, errorCode(shapeless)]).toEqual([400, 'MAILGATE_ERR_WEBHOOK_MALFORMED']);
    const array = await send(json([parsedPayload]));
    expect(errorCode(array)).toBe('MAILGATE_ERR_WEBHOOK_MALFORMED');
    const big = await send(json({ ...parsedPayload, TextBody: 'x'.repeat(5000) }));
    expect([big.status, errorCode(big)]).toEqual([413, 'MAILGATE_ERR_WEBHOOK_TOO_LARGE']);
    expect(sink.batches).toEqual([]);
    sink.failWith = 'MAILGATE_ERR_INTAKE_UNAVAILABLE';
    const down = await send(json(parsedPayload));
    expect([down.status, down.headers?.['Retry-After']]).toEqual([503, '8']);
  });
});
