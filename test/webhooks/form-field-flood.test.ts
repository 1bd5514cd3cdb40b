/**
 * Regression: one unsigned multipart POST of many tiny fields to a Mailgun endpoint froze the
 * process (the body was searched once per field, and every field was parsed before the
 * signature, which Mailgun puts in the body, could be checked). The work before the signature
 * check must be linear in the body and bounded: asserted on work done, never on time.
 */
import { describe, expect, it } from 'vitest';
import { multipartBody } from '../../adapters/webhooks/encode.js';
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
});
