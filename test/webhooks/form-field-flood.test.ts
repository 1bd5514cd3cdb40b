/**
 * Regression: one unsigned multipart POST of many tiny fields to a Mailgun endpoint froze the
 * process (the body was searched once per field, and every field was parsed before the
 * signature, which Mailgun puts in the body, could be checked). The work before the signature
 * check must be linear in the body and bounded: asserted on work done, never on time.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MAX_FORM_PARTS, readBody, type BodyStats } from '../../adapters/webhooks/body.js';
import { multipartBody, urlencodedBody } from '../../adapters/webhooks/encode.js';
import { MAX_FORM_FIELDS, parseForm, type FormStats } from '../../adapters/webhooks/form.js';
import { WebhookRefusal } from '../../adapters/webhooks/provider.js';
import { endpointFor, errorCode, toRequest } from './support.js';

const entry = { name: 'mailgun-in', provider: 'mailgun', route: 'support', signing_key: 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0' } as const;

function fieldsRequest(count: number, valueBytes: number) {
  const parts = Array.from({ length: count }, (_, i) => ({ name: `f${i}`, value: `${i}:`.padEnd(valueBytes, 'x') }));
  const { body, boundary } = multipartBody(parts, 'flood');
  return toRequest({ method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
}

describe('form field flood (unauthenticated multipart stall)', () => {
  it('walks the body about once however many fields it has (no search of the whole body per field)', async () => {
    const req = fieldsRequest(900, 200);
    const stats: FormStats = { fields: 0, files: 0, scannedBytes: 0 };
    const form = await parseForm(req, 1 << 20, stats);
    expect(form.fields).toHaveLength(900);
    expect(stats.fields).toBe(900);
    expect(stats.scannedBytes).toBeGreaterThan(req.body.length / 2);
    expect(stats.scannedBytes).toBeLessThanOrEqual(2 * req.body.length);
  });

  it('stops parsing past MAX_FORM_FIELDS fields with a too_large refusal', async () => {
    const req = fieldsRequest(10_000, 8);
    const stats: FormStats = { fields: 0, files: 0, scannedBytes: 0 };
    const err = await parseForm(req, 1 << 20, stats).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookRefusal);
    expect((err as WebhookRefusal).kind).toBe('too_large');
    expect(stats.fields).toBeLessThanOrEqual(MAX_FORM_FIELDS);
    expect(stats.scannedBytes).toBeLessThanOrEqual(2 * req.body.length);
  });

  it('answers an unsigned Mailgun POST of 10,000 fields 413 without parsing them all', async () => {
    const { send, sink } = endpointFor(entry);
    const res = await send(fieldsRequest(10_000, 8));
    expect(res.status).toBe(413);
    expect(errorCode(res)).toBe('MAILGATE_ERR_WEBHOOK_TOO_LARGE');
    expect(sink.batches).toHaveLength(0);
  });

  it('reads a streamed form flood only up to MAX_FORM_PARTS parts, never the whole body (a 30 MB body buffered before the parse)', async () => {
    const req = fieldsRequest(10_000, 3000);
    const stats: BodyStats = { bytes: 0, separators: 0 };
    let served = 0;
    const stream = Readable.from(
      (function* () {
        for (let at = 0; at < req.body.length; at += 65_536) {
          served += Math.min(65_536, req.body.length - at);
          yield req.body.subarray(at, at + 65_536);
        }
      })(),
    );
    const err = await readBody(stream, String(req.headers['content-type']), stats).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookRefusal);
    expect((err as WebhookRefusal).kind).toBe('too_large');
    // Checked per chunk read: past the bound by at most the parts of one chunk.
    expect(stats.separators).toBeGreaterThan(MAX_FORM_PARTS + 1);
    expect(stats.separators).toBeLessThan(MAX_FORM_PARTS + 30);
    // About MAX_FORM_PARTS parts of 3 KB read of 30 MB, and no more served than read.
    expect(stats.bytes).toBeLessThan((MAX_FORM_PARTS + 30) * 3100);
    expect(req.body.length).toBeGreaterThan(4 * stats.bytes);
    expect(served).toBe(stats.bytes);
  });

  it('counts every delimiter and separator once, however the body is cut into chunks', async () => {
    const multi = fieldsRequest(MAX_FORM_PARTS, 3);
    const form = urlencodedBody(Array.from({ length: MAX_FORM_PARTS + 1 }, (_, i) => [`f${i}`, 'v'] as [string, string]));
    for (const size of [1, 2, 7, 64, 65_536]) {
      const chunks = (b: Buffer) =>
        Readable.from(Array.from({ length: Math.ceil(b.length / size) }, (_, i) => b.subarray(i * size, (i + 1) * size)));
      const stats: BodyStats = { bytes: 0, separators: 0 };
      const body = await readBody(chunks(multi.body), String(multi.headers['content-type']), stats);
      expect(body.equals(multi.body)).toBe(true);
      expect(stats.separators).toBe(MAX_FORM_PARTS + 1);
      const flat: BodyStats = { bytes: 0, separators: 0 };
      expect((await readBody(chunks(form), 'application/x-www-form-urlencoded', flat)).equals(form)).toBe(true);
      expect(flat.separators).toBe(MAX_FORM_PARTS);
    }
  });
});
