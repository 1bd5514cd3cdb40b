import { describe, expect, it } from 'vitest';
import { multipartBody, urlencodedBody } from '../../adapters/webhooks/encode.js';
import { parseForm } from '../../adapters/webhooks/form.js';
import { WebhookRefusal } from '../../adapters/webhooks/provider.js';
import { toRequest } from './support.js';

/** Bytes that are not UTF-8 (a lone continuation byte, an overlong lead, 0xFF) and 8-bit latin1. */
const EIGHT_BIT = Buffer.from([0x48, 0x69, 0x80, 0xc0, 0xaf, 0xff, 0xe9, 0x00, 0x0d, 0x0a, 0x7f, 0xc3, 0xa9]);

const multipart = (parts: Parameters<typeof multipartBody>[0]) => {
  const { body, boundary } = multipartBody(parts, 'xYzZY');
  return toRequest({ method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
};

async function refusal(p: Promise<unknown>): Promise<WebhookRefusal> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WebhookRefusal);
  return err as WebhookRefusal;
}

describe('parseForm', () => {
  it('keeps multipart field values as their exact bytes, 8-bit and invalid UTF-8 included', async () => {
    const form = await parseForm(
      multipart([
        { name: 'email', value: EIGHT_BIT },
        { name: 'to', value: 'a@example.com' },
      ]),
      1024,
    );
    expect(form.last('email')!.equals(EIGHT_BIT)).toBe(true);
    expect(form.text('to')).toBe('a@example.com');
  });

  it('restores the exact bytes of a multipart field whose part labels its own charset (busboy decodes it with that charset)', async () => {
    const utf8 = Buffer.from('Grüße, 日本', 'utf8');
    const { body, boundary } = multipartBody(
      [
        { name: 'text', value: utf8, contentType: 'text/plain; charset=utf-8' },
        { name: 'raw', value: EIGHT_BIT },
      ],
      'xYzZY',
    );
    const req = toRequest({ method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
    const form = await parseForm(req, 1024);
    expect(form.last('text')!.equals(utf8)).toBe(true);
    expect(form.last('raw')!.equals(EIGHT_BIT)).toBe(true);
  });

  it('refuses a multipart field labelled UTF-8 whose bytes are not UTF-8 (they cannot be restored) as malformed', async () => {
    const { body, boundary } = multipartBody([{ name: 'text', value: EIGHT_BIT, contentType: 'text/plain; charset=utf-8' }], 'xYzZY');
    const req = toRequest({ method: 'POST', headers: { 'content-type': `multipart/form-data; boundary="${boundary}"` }, body });
    expect((await refusal(parseForm(req, 1024))).kind).toBe('malformed');
  });

  it('keeps urlencoded values as their exact bytes even when the Content-Type names a charset', async () => {
    const body = urlencodedBody([
      ['body-mime', EIGHT_BIT],
      ['name', 'Jürgen'],
    ]);
    const req = toRequest({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, body });
    const form = await parseForm(req, 1024);
    expect(form.last('body-mime')!.equals(EIGHT_BIT)).toBe(true);
    expect(form.text('name')).toBe('Jürgen');
  });

  it('keeps every value of a repeated field, the last one for last()', async () => {
    const body = urlencodedBody([
      ['token', 'a'],
      ['token', 'b'],
    ]);
    const form = await parseForm(
      toRequest({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }),
      1024,
    );
    expect(form.fields.filter(([n]) => n === 'token').map(([, v]) => v.toString())).toEqual(['a', 'b']);
    expect(form.text('token')).toBe('b');
  });

  it('returns files with their bytes, file name and type', async () => {
    const form = await parseForm(
      multipart([{ name: 'attachment1', value: EIGHT_BIT, filename: 'r\u00e9sum\u00e9.bin', contentType: 'application/pdf' }]),
      1024,
    );
    const file = form.file('attachment1')!;
    expect(file.data.equals(EIGHT_BIT)).toBe(true);
    expect(file.filename).toBe('résumé.bin');
    expect(file.mimeType).toBe('application/pdf');
  });

  it('refuses a field over the limit as too_large instead of cutting it (busboy only flags it)', async () => {
    const r = await refusal(parseForm(multipart([{ name: 'email', value: Buffer.alloc(2048, 0x41) }]), 1024));
    expect(r.kind).toBe('too_large');
    const body = urlencodedBody([['body-mime', Buffer.alloc(2048, 0x41)]]);
    const r2 = await refusal(
      parseForm(toRequest({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }), 1024),
    );
    expect(r2.kind).toBe('too_large');
  });

  it('refuses a file over the limit as too_large', async () => {
    const r = await refusal(parseForm(multipart([{ name: 'attachment1', value: Buffer.alloc(4096, 1), filename: 'a.bin' }]), 1024));
    expect(r.kind).toBe('too_large');
  });

  it('refuses a truncated multipart body as malformed', async () => {
    const req = multipart([{ name: 'email', value: 'Subject: hi\r\n\r\nbody' }]);
    const cut = { ...req, body: req.body.subarray(0, req.body.length - 20) };
    expect((await refusal(parseForm(cut, 1024))).kind).toBe('malformed');
  });

  it('refuses a body that is not a form, or a multipart type without boundary, as malformed', async () => {
    const json = toRequest({ method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') });
    expect((await refusal(parseForm(json, 1024))).kind).toBe('malformed');
    const noBoundary = toRequest({ method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: Buffer.from('x') });
    expect((await refusal(parseForm(noBoundary, 1024))).kind).toBe('malformed');
  });
});
