import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { multipartBody } from '../../adapters/webhooks/encode.js';
import { providerEntrySchema } from '../../adapters/webhooks/config.js';
import { sendgrid, signatureHeaders } from '../../adapters/webhooks/sendgrid/index.js';
import { parseMessage } from '../../src/mime/parse.js';
import { NOW, capturingLogger, endpointFor, errorCode, sample, toRequest, verifyContext } from './support.js';

const sendgridEntrySchema = providerEntrySchema('sendgrid');

const entry = {
  name: 'sendgrid-in',
  provider: 'sendgrid',
  route: 'support',
  basic_auth: { user: 'mailgate', pass: 'hook-pass-1' },
} as const;
const config = sendgridEntrySchema.parse(entry);
const raw = sample('charset-latin1-c1.eml');
const envelope = { from: 'bounce@example.org', to: ['support@example.com', 'help@example.com'] };

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const publicDer = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
const signedEntry = { ...entry, public_key: publicDer, max_age_s: 300 };

function signedRequest(body = raw, now = NOW) {
  const sim = sendgrid.simulate(body, sendgridEntrySchema.parse(signedEntry), { url: 'https://x/webhooks/sendgrid-in', now, envelope });
  return toRequest({ ...sim, headers: { ...sim.headers, ...signatureHeaders(sim.body, privateKey, now) } });
}

describe('sendgrid module', () => {
  it('takes raw mode "email" as the exact bytes (8-bit included) with the envelope', async () => {
    const req = toRequest(sendgrid.simulate(raw, config, { url: 'https://x/', now: NOW, envelope }));
    await sendgrid.verify(req, config, verifyContext());
    const [m, ...rest] = await sendgrid.normalize(req, config, verifyContext());
    expect(rest).toEqual([]);
    expect(m!.raw.equals(raw)).toBe(true);
    expect(m!.envelope).toMatchObject({
      provider: 'sendgrid',
      from: envelope.from,
      to: envelope.to,
      spf: 'pass',
      spamScore: 0.1,
      remoteAddress: '192.0.2.10',
    });
    expect(m!.eventId).toBeUndefined();
  });

  it('rebuilds parsed mode: header block kept, text in its stated charset, attachments with content-id', async () => {
    const text = Buffer.from('Gr\u00fc\u00dfe \u0080 aus K\u00f6ln\r\n', 'latin1'); // windows-1252 bytes, 0x80 = euro sign
    const pdf = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x80]);
    const { body, boundary } = multipartBody(
      [
        {
          name: 'headers',
          value: [
            'From: Anna <anna@example.org>',
            'To: support@example.com',
            'Subject: Rechnung',
            'Message-ID: <p1@example.org>',
            'Content-Type: multipart/mixed; boundary="old"',
            'MIME-Version: 1.0',
            '',
          ].join('\r\n'),
        },
        { name: 'text', value: text },
        { name: 'html', value: '<p>Hallo</p>' },
        { name: 'charsets', value: JSON.stringify({ text: 'windows-1252', html: 'UTF-8', subject: 'UTF-8' }) },
        { name: 'envelope', value: JSON.stringify({ to: ['support@example.com'], from: 'anna@example.org' }) },
        { name: 'attachments', value: '1' },
        {
          name: 'attachment-info',
          value: JSON.stringify({ attachment1: { filename: 'rechnung.pdf', type: 'application/pdf', 'content-id': 'inv1' } }),
        },
        { name: 'attachment1', value: pdf, filename: 'rechnung.pdf', contentType: 'application/pdf' },
      ],
      'xYzZY',
    );
    const req = toRequest({ method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
    const [m] = await sendgrid.normalize(req, config, verifyContext());
    const parsed = parseMessage(m!.raw);
    expect(parsed.text).toBe('Grüße € aus Köln\r\n'.replace(/\r\n/g, parsed.text!.includes('\r\n') ? '\r\n' : '\n'));
    expect(parsed.html).toContain('<p>Hallo</p>');
    expect(parsed.attachments).toHaveLength(1);
    expect(parsed.attachments[0]).toMatchObject({ size: pdf.length, content_type: 'application/pdf' });
    const head = m!.raw.toString('latin1');
    expect(head).toContain('Message-ID: <p1@example.org>');
    expect(head).not.toContain('boundary="old"');
    expect(head).toContain('Content-ID: <inv1>');
    // A retry of the same payload rebuilds the same bytes (the SHA-256 deduplication depends on it).
    const [again] = await sendgrid.normalize({ ...req }, config, verifyContext());
    expect(again!.raw.equals(m!.raw)).toBe(true);
  });

  it('refuses a request with neither "email" nor "headers" as malformed', async () => {
    const { body, boundary } = multipartBody([{ name: 'to', value: 'a@example.com' }], 'xYzZY');
    const req = toRequest({ method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
    await expect(sendgrid.normalize(req, config, verifyContext())).rejects.toMatchObject({ kind: 'malformed' });
  });
});

describe('sendgrid endpoint', () => {
  const simulated = () => toRequest(sendgrid.simulate(raw, config, { url: 'https://x/', now: NOW, envelope }));

  it('stores a genuine request and answers 200, with the origin and envelope beside the exact bytes', async () => {
    const { send, sink, adapter, post, endpoints } = endpointFor(entry);
    expect(post.path).toBe('/webhooks/sendgrid-in');
    expect(post.bodyLimit).toBe(40 * 1024 * 1024);
    expect(endpoints.map((e) => e.method)).toEqual(['POST']);
    const res = await send(simulated());
    expect(res.status).toBe(200);
    expect(sink.batches).toHaveLength(1);
    const [m] = sink.batches[0]!;
    expect(m!.raw.equals(raw)).toBe(true);
    expect(m!.route).toBe('support');
    expect(m!.receivedAt.getTime()).toBe(NOW);
    expect(m!.origin).toMatchObject({
      adapter: 'webhook:sendgrid',
      instance: 'sendgrid-in',
      envelope: { provider: 'sendgrid', to: envelope.to },
    });
    await send(simulated());
    expect(adapter.health!()[0]!.detail).toMatchObject({ accepted: 1, duplicates: 1 });
  });

  it('answers 401 without credentials and 403 with wrong ones, storing nothing and logging no secret', async () => {
    const { logger, lines } = capturingLogger();
    const { send, sink, adapter } = endpointFor(entry, { logger });
    const req = simulated();
    const unsigned = await send({ ...req, headers: { ...req.headers, authorization: undefined } });
    expect([unsigned.status, errorCode(unsigned)]).toEqual([401, 'MAILGATE_ERR_WEBHOOK_UNSIGNED']);
    const wrong = `Basic ${Buffer.from('mailgate:guess-pass-9').toString('base64')}`;
    const forged = await send({ ...req, headers: { ...req.headers, authorization: wrong } });
    expect([forged.status, errorCode(forged)]).toEqual([403, 'MAILGATE_ERR_WEBHOOK_FORGED']);
    expect(sink.batches).toEqual([]);
    expect(adapter.health!()[0]!.detail).toMatchObject({ refused: { MAILGATE_ERR_WEBHOOK_UNSIGNED: 1, MAILGATE_ERR_WEBHOOK_FORGED: 1 } });
    const log = lines();
    expect(log).toContain('MAILGATE_ERR_WEBHOOK_FORGED');
    for (const secret of ['hook-pass-1', 'guess-pass-9', wrong.slice(6), 'Content-Disposition']) expect(log).not.toContain(secret);
  });

  it('answers 500 (SendGrid retries; a 4xx would drop the mail) to a truncated body, and 413 over the body limit', async () => {
    const { send, sink } = endpointFor({ ...entry, body_limit: raw.length + 4096 });
    const req = simulated();
    const truncated = await send({ ...req, body: req.body.subarray(0, req.body.length - 40) });
    expect([truncated.status, errorCode(truncated)]).toEqual([500, 'MAILGATE_ERR_WEBHOOK_MALFORMED']);
    const big = toRequest(
      sendgrid.simulate(Buffer.concat([raw, Buffer.alloc(8192, 0x61)]), config, { url: 'https://x/', now: NOW, envelope }),
    );
    const tooLarge = await send(big);
    expect([tooLarge.status, errorCode(tooLarge)]).toEqual([413, 'MAILGATE_ERR_WEBHOOK_TOO_LARGE']);
    expect(sink.batches).toEqual([]);
  });

  it('answers 503 with Retry-After when the sink cannot store, and stores on the retry', async () => {
    const { send, sink } = endpointFor(entry);
    sink.failWith = 'MAILGATE_ERR_INTAKE_UNAVAILABLE';
    const res = await send(simulated());
    expect([res.status, res.headers?.['Retry-After'], errorCode(res)]).toEqual([503, '8', 'MAILGATE_ERR_INTAKE_UNAVAILABLE']);
    sink.failWith = 'MAILGATE_ERR_INTAKE_OUTBOX_FULL';
    expect((await send(simulated())).status).toBe(503);
    sink.failWith = undefined;
    expect((await send(simulated())).status).toBe(200);
    expect(sink.batches).toHaveLength(1);
  });

  describe('signed-webhook policy (ECDSA P-256 over timestamp and body)', () => {
    it('stores a correctly signed request', async () => {
      const { send, sink } = endpointFor(signedEntry);
      expect((await send(signedRequest())).status).toBe(200);
      expect(sink.batches[0]![0]!.raw.equals(raw)).toBe(true);
    });

    it('refuses a changed body or timestamp as forged, a missing signature as unsigned, an old one as replayed', async () => {
      const { send, sink } = endpointFor(signedEntry);
      const req = signedRequest();
      const tampered = Buffer.from(req.body);
      const at = tampered.indexOf('Subject') + 1;
      tampered[at] = tampered[at]! ^ 1;
      const forged = await send({ ...req, body: tampered });
      expect([forged.status, errorCode(forged)]).toEqual([403, 'MAILGATE_ERR_WEBHOOK_FORGED']);
      const shifted = await send({ ...req, headers: { ...req.headers, 'x-twilio-email-event-webhook-timestamp': String(NOW / 1000 + 1) } });
      expect(errorCode(shifted)).toBe('MAILGATE_ERR_WEBHOOK_FORGED');
      const unsigned = await send({ ...req, headers: { ...req.headers, 'x-twilio-email-event-webhook-signature': undefined } });
      expect([unsigned.status, errorCode(unsigned)]).toEqual([401, 'MAILGATE_ERR_WEBHOOK_UNSIGNED']);
      const old = await send(signedRequest(raw, NOW - 301_000));
      expect([old.status, errorCode(old)]).toEqual([403, 'MAILGATE_ERR_WEBHOOK_REPLAYED']);
      expect(sink.batches).toEqual([]);
    });

    it('answers 503, not a 4xx that would drop the mail, when the configured public key is unusable', async () => {
      const { send, sink } = endpointFor({ ...signedEntry, public_key: 'bm90IGEga2V5' });
      const res = await send(signedRequest());
      expect([res.status, errorCode(res)]).toEqual([503, 'MAILGATE_ERR_INTAKE_UNAVAILABLE']);
      expect(sink.batches).toEqual([]);
    });
  });
});
