/**
 * The client against a scripted HTTP server on port 0, for what a well-behaved service (and
 * so the emulator) never sends: 2xx error envelopes, gzip, stalls in the middle of a body,
 * HTTP-date Retry-After. Fault handling against the emulator is in client.emulator.test.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type AttemptInfo } from '../../src/api/client.js';
import { ApiError } from '../../src/api/errors.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

const TOKEN = 'secret-token-123';
let server: Server;
let baseUrl: string;
let script: Handler[] = [];
let seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];

const ok = { status: 'ok', new: 1, updated: 0, updated_properties_only: 0, updated_text_changed: 0, unchanged: 0 };
const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, _b, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const doc = { raw_email: { headers: { raw: 'Subject: x' }, body: { plain: 'y' } }, comment_id: 'ab' };
const syncReq = { documents: [doc], transform_tag: 'generic.0.CONVKER5' };
const fast = { baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 50 };

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const handler = script.shift() ?? json(500, { status: 'error', message: 'script exhausted' });
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  script = [];
  seen = [];
});

describe('requests', () => {
  it('sends bearer auth, JSON, gzip acceptance and the user agent; decodes a gzip answer', async () => {
    script = [
      (_req, _b, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify(ok)));
      },
    ];
    const client = createApiClient({ baseUrl: `${baseUrl}/reinfer_/`, token: TOKEN, userAgent: 'mailgate-test' });
    const res = await client.syncRawEmails('my-project/inbox_1', syncReq);
    expect(res).toMatchObject({ new: 1, updated_text_changed: 0 });
    const [r] = seen;
    expect(r).toMatchObject({ method: 'POST', url: '/reinfer_/api/v1/sources/my-project/inbox_1/sync-raw-emails' });
    expect(r!.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'user-agent': 'mailgate-test',
    });
    expect(r!.headers['accept-encoding']).toMatch(/gzip/);
    expect(JSON.parse(r!.body)).toEqual(syncReq);
  });

  it('decodes a deflate answer', async () => {
    script = [
      (_req, _b, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'deflate' });
        res.end(deflateSync(JSON.stringify(ok)));
      },
    ];
    const client = createApiClient({ baseUrl, token: TOKEN });
    expect(await client.syncRawEmails('p/s', syncReq)).toMatchObject({ new: 1 });
  });

  it('no_charge only when asked; predict path with live/staging/integer versions', async () => {
    const predicted = { status: 'ok', predictions: [[]], model: { version: 1, time: '2026-01-01T00:00:00Z' } };
    script = [json(200, ok), json(200, predicted), json(200, predicted), json(200, predicted)];
    const client = createApiClient({ baseUrl, token: TOKEN });
    await client.syncRawEmails('p/s', syncReq, { noCharge: true });
    await client.predictRawEmails('p/d', 'live', syncReq);
    await client.predictRawEmails('p/d', 'staging', syncReq);
    await client.predictRawEmails('p/d', 7, syncReq);
    expect(seen.map((s) => s.url)).toEqual([
      '/api/v1/sources/p/s/sync-raw-emails?no_charge=true',
      '/api/v1/datasets/p/d/labellers/live/predict-raw-emails',
      '/api/v1/datasets/p/d/labellers/staging/predict-raw-emails',
      '/api/v1/datasets/p/d/labellers/7/predict-raw-emails',
    ]);
  });

  it('ensureSource creates on 404 only', async () => {
    script = [
      json(404, { status: 'error', message: '404 Not Found' }),
      json(200, { status: 'ok', source: { name: 's', owner: 'p', id: '0123456789abcdef' } }),
    ];
    const client = createApiClient({ baseUrl, token: TOKEN });
    expect(await client.ensureSource('p/s')).toMatchObject({ id: '0123456789abcdef' });
    expect(seen.map((s) => `${s.method} ${s.url} ${s.body}`)).toEqual([
      'GET /api/v1/sources/p/s ',
      'PUT /api/v1/sources/p/s {"source":{}}',
    ]);
    script = [json(403, { status: 'error', message: 'no' })];
    await expect(client.ensureSource('p/s')).rejects.toMatchObject({ code: 'MAILGATE_ERR_API_FORBIDDEN' });
  });

  it('ensureSource: a create answered 409 (another caller created it first) is not retried; the source is read again', async () => {
    const source = { name: 's', owner: 'p', id: '0123456789abcdef' };
    script = [
      json(404, { status: 'error', message: '404 Not Found' }),
      json(409, { status: 'error', message: "Source 'p/s' already exists." }),
      json(200, { status: 'ok', source }),
    ];
    const client = createApiClient({ baseUrl, token: TOKEN, retry: fast });
    expect(await client.ensureSource('p/s')).toEqual(source);
    expect(seen.map((s) => s.method)).toEqual(['GET', 'PUT', 'GET']);
  });

  it.each([['no-slash'], ['p/'], ['/s'], ['p/s/t'], ['p/has space']])('refuses the resource name %j before any request', async (name) => {
    const client = createApiClient({ baseUrl, token: TOKEN });
    await expect(client.getSource(name)).rejects.toMatchObject({ code: 'MAILGATE_ERR_CONFIG_INVALID' });
    expect(seen).toHaveLength(0);
  });

  it.each([
    [{ baseUrl: 'not a url', token: 't' }],
    [{ baseUrl: 'ftp://x', token: 't' }],
    [{ baseUrl: 'http://x', token: '' }],
    [{ baseUrl: 'http://x', token: 'a\nb' }],
    [{ baseUrl: 'http://x', token: 't', timeoutMs: 0 }],
  ])('refuses options %j', (options) => {
    expect(() => createApiClient(options)).toThrowError(expect.objectContaining({ code: 'MAILGATE_ERR_CONFIG_INVALID' }) as Error);
  });
});

describe('failures', () => {
  it('a 2xx with status "error" is a bad response, not retried (the service processed the request)', async () => {
    script = [json(200, { status: 'error', message: 'odd' }), json(200, ok)];
    const attempts: AttemptInfo[] = [];
    const client = createApiClient({ baseUrl, token: TOKEN, retry: fast, onAttempt: (a) => attempts.push(a) });
    await expect(client.syncRawEmails('p/s', syncReq)).rejects.toMatchObject({ code: 'MAILGATE_ERR_API_BAD_RESPONSE', status: 200 });
    expect(attempts.map((a) => [a.attempt, a.status, a.error?.code, a.retryInMs])).toEqual([
      [1, 200, 'MAILGATE_ERR_API_BAD_RESPONSE', undefined],
    ]);
    expect(seen).toHaveLength(1);
  });

  it('a 2xx lacking the counts, predictions misaligned with the documents, or a label without a name is a bad response, sent once', async () => {
    script = [
      json(200, { status: 'ok' }),
      json(200, { status: 'ok', predictions: [], model: null }),
      json(200, { status: 'ok', predictions: [[{ probability: 0.5 }]], model: null }),
    ];
    const client = createApiClient({ baseUrl, token: TOKEN, retry: fast });
    await expect(client.syncRawEmails('p/s', syncReq)).rejects.toMatchObject({ code: 'MAILGATE_ERR_API_BAD_RESPONSE' });
    await expect(client.predictRawEmails('p/d', 1, syncReq)).rejects.toMatchObject({ code: 'MAILGATE_ERR_API_BAD_RESPONSE' });
    await expect(client.predictRawEmails('p/d', 1, syncReq)).rejects.toMatchObject({ code: 'MAILGATE_ERR_API_BAD_RESPONSE' });
    expect(seen).toHaveLength(3);
  });

  it('predict: a label name given as a string becomes a path; a missing or null model is null', async () => {
    const labels = [
      { name: 'Billing > Refund', probability: 0.9, sentiment: -0.5 },
      { name: ['Praise'], probability: 0.3 },
    ];
    script = [json(200, { status: 'ok', predictions: [labels] }), json(200, { status: 'ok', predictions: [labels], model: null })];
    const client = createApiClient({ baseUrl, token: TOKEN, retry: fast });
    for (let i = 0; i < 2; i++) {
      expect(await client.predictRawEmails('p/d', 'live', syncReq)).toMatchObject({
        model: null,
        predictions: [
          [
            { name: ['Billing', 'Refund'], probability: 0.9, sentiment: -0.5 },
            { name: ['Praise'], probability: 0.3 },
          ],
        ],
      });
    }
  });

  it('older services without the update split count every update as text-changed', async () => {
    script = [json(200, { status: 'ok', new: 0, updated: 1, unchanged: 0 })];
    const client = createApiClient({ baseUrl, token: TOKEN });
    expect(await client.syncRawEmails('p/s', syncReq)).toMatchObject({ updated: 1, updated_text_changed: 1, updated_properties_only: 0 });
  });

  it('honours an HTTP-date Retry-After (capped), then succeeds', async () => {
    const when = new Date(Date.now() + 3_600_000).toUTCString();
    script = [json(429, { status: 'error', message: 'slow down' }, { 'retry-after': when }), json(200, ok)];
    const attempts: AttemptInfo[] = [];
    const client = createApiClient({ baseUrl, token: TOKEN, retry: fast, onAttempt: (a) => attempts.push(a) });
    await client.syncRawEmails('p/s', syncReq);
    expect(attempts[0]).toMatchObject({ status: 429, retryInMs: 50 });
    expect(attempts[0]!.error?.retryAfterMs).toBeGreaterThan(3_500_000);
  });

  it('a body that stalls past the deadline is a timeout, and the deadline covers the body', async () => {
    script = [
      (_req, _b, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"status":"ok",'); // never finished
      },
    ];
    const client = createApiClient({ baseUrl, token: TOKEN, timeoutMs: 1000, retry: { ...fast, maxAttempts: 1 } });
    const err = await client.syncRawEmails('p/s', syncReq).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'MAILGATE_ERR_API_TIMEOUT',
      status: 200,
      attempts: 1,
      exhausted: 'attempts',
      cause: { code: 'MAILGATE_ERR_API_TIMEOUT' },
    });
    expect((err as ApiError).message).toMatch(/reading the 200 response body.*gave up after 1 attempts/);
  });

  it('a connection closed in the middle of a body is a network error, retried to success', async () => {
    script = [
      (_req, _b, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        res.write('{"status":"ok",', () => res.destroy());
      },
      json(200, ok),
    ];
    const attempts: AttemptInfo[] = [];
    const client = createApiClient({ baseUrl, token: TOKEN, retry: fast, onAttempt: (a) => attempts.push(a) });
    expect(await client.syncRawEmails('p/s', syncReq)).toMatchObject({ new: 1 });
    expect(attempts.map((a) => a.error?.code)).toEqual(['MAILGATE_ERR_API_NETWORK', undefined]);
  });

  it('the time budget covers the attempt in flight: its deadline is cut to what is left of the budget', async () => {
    script = [
      json(503, { status: 'error', message: 'busy' }),
      (_req, _b, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"status":"ok",'); // never finished
      },
    ];
    const attempts: AttemptInfo[] = [];
    const client = createApiClient({
      baseUrl,
      token: TOKEN,
      timeoutMs: 240_000,
      onAttempt: (a) => attempts.push(a),
      retry: { ...fast, baseDelayMs: 10, maxDelayMs: 10, jitter: 0, budgetMs: 1500 },
    });
    const err = await client.syncRawEmails('p/s', syncReq).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'MAILGATE_ERR_API_TIMEOUT', status: 200, attempts: 2, exhausted: 'budget' });
    expect((err as ApiError).message).toMatch(/within \d+ ms, what was left of the retry budget \(reading the 200 response body\)/);
    expect(attempts.map((a) => a.error?.code)).toEqual(['MAILGATE_ERR_API_SERVER', 'MAILGATE_ERR_API_TIMEOUT']);
  });

  it('not retried: 400/401/403/404/422 come back at once with the API message', async () => {
    const client = createApiClient({ baseUrl, token: TOKEN, retry: fast });
    for (const [status, code] of [
      [400, 'MAILGATE_ERR_API_BAD_REQUEST'],
      [401, 'MAILGATE_ERR_API_UNAUTHORIZED'],
      [403, 'MAILGATE_ERR_API_FORBIDDEN'],
      [404, 'MAILGATE_ERR_API_NOT_FOUND'],
      [422, 'MAILGATE_ERR_API_UNPROCESSABLE'],
    ] as const) {
      seen = [];
      script = [json(status, { status: 'error', message: `m${status}` })];
      await expect(client.syncRawEmails('p/s', syncReq)).rejects.toMatchObject({ code, status, apiMessage: `m${status}` });
      expect(seen).toHaveLength(1);
    }
  });

  it('the token never appears in errors or attempt records', async () => {
    script = [json(401, { status: 'error', message: 'bad token' })];
    const attempts: AttemptInfo[] = [];
    const client = createApiClient({ baseUrl, token: TOKEN, onAttempt: (a) => attempts.push(a) });
    const err = await client.syncRawEmails('p/s', syncReq).catch((e: unknown) => e);
    const dump = JSON.stringify({ err, message: (err as Error).message, stack: (err as Error).stack, attempts });
    expect(dump).not.toContain(TOKEN);
  });

  it('a caller abort during backoff ends the call as aborted, not retried', async () => {
    script = [json(503, { status: 'error', message: 'busy' }, { 'retry-after': '30' })];
    const controller = new AbortController();
    const client = createApiClient({
      baseUrl,
      token: TOKEN,
      retry: { maxRetryAfterMs: 30_000 },
      onAttempt: () => setTimeout(() => controller.abort(), 10),
    });
    await expect(client.syncRawEmails('p/s', syncReq, { signal: controller.signal })).rejects.toMatchObject({
      code: 'MAILGATE_ERR_API_ABORTED',
      attempts: 1,
    });
    expect(seen).toHaveLength(1);
  });

  it('connection refused is a network error, retried then exhausted', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const attempts: AttemptInfo[] = [];
    const client = createApiClient({
      baseUrl: `http://127.0.0.1:${port}`,
      token: TOKEN,
      retry: { ...fast, maxAttempts: 3 },
      onAttempt: (a) => attempts.push(a),
    });
    await expect(client.getSource('p/s')).rejects.toMatchObject({
      code: 'MAILGATE_ERR_API_NETWORK',
      attempts: 3,
      exhausted: 'attempts',
      message: expect.stringMatching(/ECONNREFUSED.*gave up after 3 attempts/) as string,
    });
    expect(attempts.map((a) => a.error?.code)).toEqual(Array(3).fill('MAILGATE_ERR_API_NETWORK'));
    expect(attempts[0]!.error?.message).toMatch(/ECONNREFUSED/);
  });
});
