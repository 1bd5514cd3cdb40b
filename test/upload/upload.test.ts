import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseMultipart } from '../../adapters/upload/files.js';
import { itemRef } from '../../adapters/upload/item-ref.js';
import { createUploadAdapter, uploadConfigSchema, type UploadAdapter } from '../../adapters/upload/index.js';
import { createLogger } from '../../src/logger.js';
import type { PushRequest } from '../../src/pipeline/types.js';
import { endpointOn } from '../support/push-start.js';
import { MemorySink } from './support/memory-sink.js';

const KEY = 'upload-key-0123456789';
const EML = Buffer.from('From: a@example.com\r\nTo: b@example.com\r\nSubject: hello\r\n\r\nbody \xe9\r\n', 'latin1');
const MBOX3 = Buffer.from(
  [
    'From a@example.com Mon Mar  4 09:00:00 2024',
    'Subject: one',
    '',
    'first',
    '>From here on, quoted',
    '',
    'From b@example.com Mon Mar  4 10:00:00 2024',
    'Subject: two',
    '',
    'second',
    '',
    'From c@example.com Mon Mar  4 11:00:00 2024',
    'Subject: three',
    '',
    'third',
    '',
  ].join('\n'),
);

function adapter(extra: Record<string, unknown> = {}): UploadAdapter {
  return createUploadAdapter({ name: 'desk', route: 'r', api_keys: [KEY], ...extra }, { logger: createLogger(false) });
}

function endpoint(a: UploadAdapter, method: 'GET' | 'POST') {
  return endpointOn(a, a.endpoints().find((e) => e.method === method)!);
}

function req(body: Buffer | string, headers: Record<string, string>, auth = true): PushRequest {
  return {
    method: 'POST',
    url: '/api/upload/desk',
    headers: { ...(auth && { authorization: `Bearer ${KEY}` }), ...headers },
    body: Buffer.from(body),
  };
}

function multipart(files: { name: string; type?: string; bytes: Buffer }[], boundary = 'xYzZY-boundary'): { body: Buffer; type: string } {
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${f.name}"\r\n` +
          `Content-Type: ${f.type ?? 'application/octet-stream'}\r\n\r\n`,
      ),
    );
    parts.push(f.bytes, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

type Result = { id: string; duplicate: boolean; dead?: { code: string }; file?: string; index?: number };
const results = (body: unknown) => (body as { results: Result[] }).results;

describe('upload configuration', () => {
  it('needs at least one key of 16 characters and takes the documented defaults', () => {
    expect(uploadConfigSchema.safeParse({ name: 'a', route: 'r', api_keys: [] }).success).toBe(false);
    expect(uploadConfigSchema.safeParse({ name: 'a', route: 'r', api_keys: ['short'] }).success).toBe(false);
    const c = uploadConfigSchema.parse({ name: 'a', route: 'r', api_keys: [KEY] });
    expect(c).toMatchObject({ body_limit: 40 * 1024 * 1024, max_files: 1000 });
    expect(() => adapter({ surprise: true })).toThrow(/surprise/);
  });
});

describe('POST /api/upload/<name>', () => {
  it('stores one message/rfc822 body byte for byte and answers 202 with its id', async () => {
    const a = adapter();
    const sink = new MemorySink();
    const res = await endpoint(a, 'POST').handle(req(EML, { 'content-type': 'message/rfc822' }), sink, {});
    expect(res.status).toBe(202);
    expect(results(res.body)).toEqual([{ id: itemRef(KEY, 'desk', 'item-1'), item: 'item-1', duplicate: false }]);
    expect(sink.stored[0]!.raw.equals(EML)).toBe(true);
    expect(sink.stored[0]!).toMatchObject({
      route: 'r',
      origin: { adapter: 'upload', instance: 'desk', envelope: { provider: 'upload' } },
    });
    expect(endpoint(a, 'POST').path).toBe('/api/upload/desk');
  });

  it('splits an mbox of three by the mboxrd rules', async () => {
    const sink = new MemorySink();
    const res = await endpoint(adapter(), 'POST').handle(
      req(MBOX3, { 'content-type': 'application/mbox', 'x-api-key': KEY }, false),
      sink,
      {},
    );
    expect(res.status).toBe(202);
    expect(results(res.body).map((r) => r.index)).toEqual([0, 1, 2]);
    expect(sink.stored.map((m) => m.raw.toString())).toEqual([
      'Subject: one\n\nfirst\nFrom here on, quoted\n',
      'Subject: two\n\nsecond\n',
      'Subject: three\n\nthird\n',
    ]);
  });

  it('stores the good files of a multipart upload and the bad one as a dead letter with its bytes', async () => {
    const msg = await readFile('samples/files/msg/properties.msg');
    const bad = Buffer.from('not an outlook file at all');
    const { body, type } = multipart([
      { name: 'one.eml', bytes: EML },
      { name: 'two.msg', type: 'application/vnd.ms-outlook', bytes: msg },
      { name: 'broken.msg', bytes: bad },
    ]);
    const sink = new MemorySink();
    const res = await endpoint(adapter(), 'POST').handle(req(body, { 'content-type': type }), sink, {});
    expect(res.status).toBe(202);
    const r = results(res.body);
    expect(r.map((x) => [x.file, x.dead?.code])).toEqual([
      ['one.eml', undefined],
      ['two.msg', undefined],
      ['broken.msg', 'MAILGATE_ERR_INPUT_MSG_INVALID'],
    ]);
    expect(sink.stored[0]!.raw.equals(EML)).toBe(true);
    expect(sink.stored[1]!.raw.toString('latin1')).toMatch(/^[\s\S]*\r?\n\r?\n/);
    expect(sink.stored[2]!.raw.equals(bad)).toBe(true);
    expect(sink.stored[2]!.failure?.code).toBe('MAILGATE_ERR_INPUT_MSG_INVALID');
    const state = await endpoint(adapter(), 'GET').handle({ ...req('', {}), method: 'GET' }, sink, { id: r[2]!.id });
    expect(state).toMatchObject({ status: 200, body: { state: 'dead', error: { code: 'MAILGATE_ERR_INPUT_MSG_INVALID' } } });
  });

  it('answers an Idempotency-Key replay with the first answer and refuses the key with other content (422)', async () => {
    const a = adapter();
    const sink = new MemorySink();
    const post = endpoint(a, 'POST');
    const first = await post.handle(req(EML, { 'content-type': 'message/rfc822', 'idempotency-key': 'k1' }), sink, {});
    const again = await post.handle(req(EML, { 'content-type': 'message/rfc822', 'idempotency-key': 'k1' }), sink, {});
    expect(again).toEqual(first);
    expect(sink.submits).toBe(1);
    const other = await post.handle(req(MBOX3, { 'content-type': 'application/mbox', 'idempotency-key': 'k1' }), sink, {});
    expect(other).toMatchObject({ status: 422, body: { error: { code: 'MAILGATE_ERR_UPLOAD_IDEMPOTENCY_CONFLICT' } } });
    expect(sink.submits).toBe(1);
  });

  it('takes a multipart retry under a fresh boundary as the same content', async () => {
    const post = endpoint(adapter(), 'POST');
    const sink = new MemorySink();
    const files = [
      { name: 'a.eml', bytes: EML },
      { name: 'b.mbox', bytes: MBOX3 },
    ];
    const first = multipart(files, 'boundary-one');
    const retry = multipart(files, 'boundary-two');
    const a = await post.handle(req(first.body, { 'content-type': first.type, 'idempotency-key': 'k3' }), sink, {});
    const b = await post.handle(req(retry.body, { 'content-type': retry.type, 'idempotency-key': 'k3' }), sink, {});
    expect(a.status).toBe(202);
    expect(b).toEqual(a);
    expect(sink.submits).toBe(1);
    const renamed = multipart([{ name: 'c.eml', bytes: EML }, files[1]!], 'boundary-three');
    const c = await post.handle(req(renamed.body, { 'content-type': renamed.type, 'idempotency-key': 'k3' }), sink, {});
    expect(c.status).toBe(422);
  });

  it('lets a key be retried after the store was unavailable (503 with Retry-After, nothing remembered)', async () => {
    const sink = new MemorySink();
    sink.unavailable = true;
    const post = endpoint(adapter(), 'POST');
    const failed = await post.handle(req(EML, { 'content-type': 'message/rfc822', 'idempotency-key': 'k2' }), sink, {});
    expect(failed).toMatchObject({
      status: 503,
      headers: { 'retry-after': '30' },
      body: { error: { code: 'MAILGATE_ERR_INTAKE_UNAVAILABLE' } },
    });
    sink.unavailable = false;
    const ok = await post.handle(req(EML, { 'content-type': 'message/rfc822', 'idempotency-key': 'k2' }), sink, {});
    expect(ok.status).toBe(202);
    expect(sink.stored).toHaveLength(1);
  });

  it('refuses a multipart file over the limit with 413 and stores nothing of the upload', async () => {
    const big = Buffer.alloc(2048, 'a');
    const { body, type } = multipart([
      { name: 'ok.eml', bytes: EML },
      { name: 'big.eml', bytes: Buffer.concat([Buffer.from('Subject: big\r\n\r\n'), big]) },
    ]);
    const sink = new MemorySink();
    const whole = await endpoint(adapter({ body_limit: 1024 }), 'POST').handle(req(body, { 'content-type': type }), sink, {});
    expect(whole).toMatchObject({ status: 413, body: { error: { code: 'MAILGATE_ERR_UPLOAD_TOO_LARGE' } } });
    expect(sink.submits).toBe(0);
    // The multipart parser itself never hands over a file cut at its size limit.
    const cut = parseMultipart(type, body, { maxFileBytes: 1024, maxFiles: 10 });
    await expect(cut).rejects.toMatchObject({ code: 'MAILGATE_ERR_UPLOAD_TOO_LARGE' });
    const fits = await parseMultipart(type, body, { maxFileBytes: 4096, maxFiles: 10 });
    expect(fits.map((f) => [f.name, f.kind, f.bytes.length])).toEqual([
      ['ok.eml', 'eml', EML.length],
      ['big.eml', 'eml', 2048 + 16],
    ]);
  });

  it('refuses more files than max_files with 413', async () => {
    const { body, type } = multipart([1, 2, 3].map((i) => ({ name: `${i}.eml`, bytes: EML })));
    const sink = new MemorySink();
    const res = await endpoint(adapter({ max_files: 2 }), 'POST').handle(req(body, { 'content-type': type }), sink, {});
    expect(res).toMatchObject({ status: 413, body: { error: { code: 'MAILGATE_ERR_UPLOAD_TOO_LARGE' } } });
    expect(sink.submits).toBe(0);
  });

  it('refuses a truncated multipart body, an empty body and an unknown type, storing nothing', async () => {
    const { body, type } = multipart([{ name: 'one.eml', bytes: EML }]);
    const sink = new MemorySink();
    const post = endpoint(adapter(), 'POST');
    const cut = await post.handle(req(body.subarray(0, body.length - 30), { 'content-type': type }), sink, {});
    expect(cut).toMatchObject({ status: 400, body: { error: { code: 'MAILGATE_ERR_UPLOAD_BAD_REQUEST' } } });
    const empty = await post.handle(req('', { 'content-type': 'message/rfc822' }), sink, {});
    expect(empty).toMatchObject({ status: 400, body: { error: { code: 'MAILGATE_ERR_UPLOAD_BAD_REQUEST' } } });
    const json = await post.handle(req('{}', { 'content-type': 'application/json' }), sink, {});
    expect(json).toMatchObject({ status: 415, body: { error: { code: 'MAILGATE_ERR_SERVER_UNSUPPORTED_MEDIA_TYPE' } } });
    expect(sink.submits).toBe(0);
  });

  it('refuses a missing or wrong key with 401', async () => {
    const sink = new MemorySink();
    const post = endpoint(adapter(), 'POST');
    const none = await post.handle(req(EML, { 'content-type': 'message/rfc822' }, false), sink, {});
    expect(none).toMatchObject({ status: 401, body: { error: { code: 'MAILGATE_ERR_UPLOAD_UNAUTHORIZED' } } });
    const wrong = await post.handle(req(EML, { 'content-type': 'message/rfc822', 'x-api-key': `${KEY}x` }, false), sink, {});
    expect(wrong).toMatchObject({ status: 401, body: { error: { code: 'MAILGATE_ERR_UPLOAD_UNAUTHORIZED' } } });
    const get = await endpoint(adapter(), 'GET').handle({ ...req('', {}, false), method: 'GET' }, sink, { id: 'item-1' });
    expect(get.status).toBe(401);
    expect(sink.submits).toBe(0);
  });
});

describe('GET /api/upload/<name>/<id>', () => {
  it("shows the item's state, and 404 for an unknown id or another route's item", async () => {
    const sink = new MemorySink();
    const a = adapter();
    const posted = await endpoint(a, 'POST').handle(req(EML, { 'content-type': 'message/rfc822' }), sink, {});
    const id = results(posted.body)[0]!.id;
    const get = endpoint(a, 'GET');
    expect(get.path).toBe('/api/upload/desk/:id');
    expect(await get.handle({ ...req('', {}), method: 'GET' }, sink, { id })).toMatchObject({ status: 200, body: { id, state: 'queued' } });
    sink.items.get('item-1')!.state = 'delivered';
    expect(await get.handle({ ...req('', {}), method: 'GET' }, sink, { id })).toMatchObject({ status: 200, body: { state: 'delivered' } });
    expect(await get.handle({ ...req('', {}), method: 'GET' }, sink, { id: 'nope' })).toMatchObject({
      status: 404,
      body: { error: { code: 'MAILGATE_ERR_SERVER_NOT_FOUND' } },
    });
    sink.items.get('item-1')!.route = 'other';
    expect((await get.handle({ ...req('', {}), method: 'GET' }, sink, { id })).status).toBe(404);
  });

  it('shows a key only the items it uploaded: a bare or walked item number, another key or another endpoint is 404 (sequential ids walked)', async () => {
    const OTHER = 'other-upload-key-0123456789';
    const sink = new MemorySink();
    const a = adapter({ api_keys: [KEY, OTHER] });
    const as = (key: string, headers: Record<string, string> = {}) => ({
      ...req('', {}),
      headers: { authorization: `Bearer ${key}`, ...headers },
    });
    const mine = results(
      (await endpoint(a, 'POST').handle({ ...as(KEY, { 'content-type': 'message/rfc822' }), body: EML }, sink, {})).body,
    )[0]!;
    const theirs = results(
      (await endpoint(a, 'POST').handle({ ...as(OTHER, { 'content-type': 'message/rfc822' }), body: MBOX3.subarray(0, 60) }, sink, {}))
        .body,
    )[0]!;
    const get = endpoint(a, 'GET');
    const status = async (key: string, id: string) => (await get.handle({ ...as(key), method: 'GET' }, sink, { id })).status;
    expect(await status(KEY, mine.id)).toBe(200);
    expect(await status(OTHER, theirs.id)).toBe(200);
    // The other uploader's item: not by its id (tagged for the other key), not by its number.
    expect(await status(KEY, theirs.id)).toBe(404);
    for (const n of ['item-1', 'item-2', '1', '2']) expect(await status(KEY, n)).toBe(404);
    const [number, tag] = theirs.id.split('.');
    expect(await status(KEY, `${number}.${tag!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}`)).toBe(404);
    // The same key on another endpoint of the route cannot read this endpoint's ids.
    const elsewhere = createUploadAdapter({ name: 'front', route: 'r', api_keys: [KEY] }, { logger: createLogger(false) });
    const other = endpoint(elsewhere, 'GET');
    expect((await other.handle({ ...as(KEY), method: 'GET' }, sink, { id: mine.id })).status).toBe(404);
    // A duplicate is answered with the first item's number, tagged for the key that sent it again.
    const again = results(
      (await endpoint(a, 'POST').handle({ ...as(OTHER, { 'content-type': 'message/rfc822' }), body: EML }, sink, {})).body,
    )[0]!;
    expect(again.duplicate).toBe(true);
    expect(again.id).toBe(itemRef(OTHER, 'desk', 'item-1'));
    expect(await status(OTHER, again.id)).toBe(200);
  });
});
