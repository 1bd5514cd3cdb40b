import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Writable } from 'node:stream';
import { ERROR_CODES } from '../../src/error-catalogue.js';
import { createLogger } from '../../src/logger.js';
import { app as makeApp, auth, fixture, KEY, OTHER_KEY } from './support.js';

let current: FastifyInstance | undefined;
function app(...args: Parameters<typeof makeApp>) {
  const built = makeApp(...args);
  current = built.app;
  return built;
}
afterEach(async () => {
  await current?.close();
  current = undefined;
});

const errorOf = (body: string) => (JSON.parse(body) as { error: { code: string; message: string } }).error;

describe('probes and metrics', () => {
  it('livez answers ok; readyz follows the checks, failures and exceptions', async () => {
    const { app: a, f } = app();
    expect((await a.inject('/livez')).json()).toEqual({ status: 'ok' });
    let res = await a.inject('/readyz');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', checks: { store: { ok: true } } });
    f.readiness.report = { ok: false, checks: { store: { ok: true }, 'imap:support-inbox': { ok: false, state: 'backoff' } } };
    res = await a.inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'unavailable', checks: { 'imap:support-inbox': { ok: false, state: 'backoff' } } });
    f.readiness.report = new Error('database is locked');
    res = await a.inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'unavailable', checks: { ready: { ok: false, state: 'failed' } } });
  });

  it('readyz leak: the open probe shows state and code, never the error text (users, hosts, tenants)', async () => {
    const { app: a, f } = app();
    f.readiness.report = {
      ok: false,
      checks: {
        store: {
          ok: false,
          state: 'unreachable',
          code: 'MAILGATE_ERR_STORE_UNAVAILABLE',
          detail: 'password authentication failed for user "mailgate_prod" at db.internal.acme:5432',
        },
        'imap:support': {
          ok: false,
          state: 'backoff',
          code: 'MAILGATE_ERR_IMAP_AUTH',
          detail: 'IMAP login refused for ceo@acme.example (tenant 4f1c…)',
        },
      },
    };
    const res = await a.inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      status: 'unavailable',
      checks: {
        store: { ok: false, state: 'unreachable', code: 'MAILGATE_ERR_STORE_UNAVAILABLE' },
        'imap:support': { ok: false, state: 'backoff', code: 'MAILGATE_ERR_IMAP_AUTH' },
      },
    });
    for (const secret of ['mailgate_prod', 'db.internal', 'ceo@acme', 'tenant']) expect(res.body).not.toContain(secret);
  });

  it('readyz is bounded when a check hangs', async () => {
    const f = fixture();
    f.deps.ready = () => new Promise(() => undefined);
    const { app: a } = app({ ready_timeout_ms: 20 }, f);
    const res = await a.inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json().checks.ready).toEqual({ ok: false, state: 'timeout' });
  });

  it('serves metrics as text 0.0.4 and counts its own requests by route pattern', async () => {
    const { app: a, f } = app();
    f.metrics.messagesDelivered.inc({ route: 'support', adapter: 'imap' }, 3);
    await a.inject({ url: '/api/dlq/2', headers: auth() });
    await a.inject('/nope');
    const res = await a.inject('/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).toContain('mailgate_messages_delivered_total{route="support",adapter="imap"} 3\n');
    expect(res.body).toContain('mailgate_http_requests_total{method="GET",path="/api/dlq/:id",status="200"} 1\n');
    expect(res.body).toContain('mailgate_http_requests_total{method="GET",path="unmatched",status="404"} 1\n');
  });
});

describe('admin API keys', () => {
  const routes: Array<[string, string]> = [
    ['GET', '/api/status'],
    ['GET', '/api/dlq'],
    ['GET', '/api/dlq/1'],
    ['GET', '/api/dlq/1/raw'],
    ['POST', '/api/dlq/1/replay'],
    ['DELETE', '/api/dlq?all=true'],
    ['GET', '/api/preview/7'],
    ['POST', '/api/preview'],
    ['POST', '/api/preview/threads'],
  ];

  it('answers 401 without a key or with a wrong one, before touching anything', async () => {
    const { app: a, f } = app();
    for (const [method, url] of routes) {
      for (const headers of [{}, auth('wrong-key-wrong-key'), auth(KEY + 'x'), { authorization: KEY }, { authorization: `Basic ${KEY}` }]) {
        const res = await a.inject({ method: method as 'GET', url, headers });
        expect(res.statusCode, `${method} ${url}`).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Bearer realm="mailgate"');
        expect(errorOf(res.body).code).toBe('MAILGATE_ERR_SERVER_UNAUTHORIZED');
      }
    }
    expect(f.dead.size).toBe(5);
    expect(f.purged).toEqual([]);
  });

  it('accepts every configured key, case-insensitive scheme', async () => {
    const { app: a } = app();
    expect((await a.inject({ url: '/api/status', headers: auth(KEY) })).statusCode).toBe(200);
    expect((await a.inject({ url: '/api/status', headers: auth(OTHER_KEY) })).statusCode).toBe(200);
    expect((await a.inject({ url: '/api/status', headers: { authorization: `bearer ${KEY}` } })).statusCode).toBe(200);
  });

  it('with no keys configured the admin API is disabled with a clear 403', async () => {
    const { app: a } = app({ api_keys: [] });
    for (const [method, url] of routes) {
      const res = await a.inject({ method: method as 'GET', url, headers: auth() });
      expect(res.statusCode).toBe(403);
      const err = errorOf(res.body);
      expect(err.code).toBe('MAILGATE_ERR_SERVER_ADMIN_DISABLED');
      expect(err.message).toContain('server.api_keys');
    }
    expect((await a.inject('/livez')).statusCode).toBe(200);
  });
});

describe('admin API', () => {
  it('reports status with server uptime', async () => {
    const { app: a } = app();
    const res = await a.inject({ url: '/api/status', headers: auth() });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toMatchObject({
      store: { kind: 'memory' },
      routes: [{ route: 'support' }],
      adapters: [{ state: 'idle' }],
      server: { uptime_seconds: expect.any(Number) },
    });
  });

  it('lists dead letters with a cursor and filters', async () => {
    const { app: a } = app();
    let res = await a.inject({ url: '/api/dlq?limit=2', headers: auth() });
    expect(res.json()).toMatchObject({ items: [{ id: 1 }, { id: 2 }], next_after: 2 });
    // Where each came from as its kind shows it (the label of the items list and `dlq list`).
    expect(res.json().items[0].originLabel).toBe('files drop /in/1.eml');
    res = await a.inject({ url: '/api/dlq?limit=2&after=2', headers: auth() });
    expect(res.json().items.map((d: { id: number }) => d.id)).toEqual([3, 4]);
    res = await a.inject({ url: '/api/dlq?route=sales', headers: auth() });
    expect(res.json()).toMatchObject({ items: [{ id: 4 }, { id: 5 }], next_after: null });
    expect(JSON.stringify(res.json())).not.toContain('"raw"');
  });

  it('rejects bad parameters with 400 naming the parameter', async () => {
    const { app: a } = app();
    for (const url of [
      '/api/dlq?limit=0',
      '/api/dlq?limit=10001',
      '/api/dlq?limit=abc',
      '/api/dlq?rout=support',
      '/api/dlq/abc',
      '/api/dlq/0',
      '/api/preview/x',
    ]) {
      const res = await a.inject({ url, headers: auth() });
      expect(res.statusCode, url).toBe(400);
      expect(errorOf(res.body).code).toBe('MAILGATE_ERR_SERVER_BAD_REQUEST');
    }
    expect(errorOf((await a.inject({ url: '/api/dlq?rout=support', headers: auth() })).body).message).toContain('rout');
  });

  it('shows one dead letter without its bytes, and serves the bytes as .eml', async () => {
    const { app: a } = app();
    const res = await a.inject({ url: '/api/dlq/3', headers: auth() });
    expect(res.json()).toMatchObject({
      id: 3,
      route: 'support',
      error: { code: 'MAILGATE_ERR_BATCH_REJECTED' },
      raw_bytes: expect.any(Number),
    });
    expect(res.json()).not.toHaveProperty('raw');
    const raw = await a.inject({ url: '/api/dlq/3/raw', headers: auth() });
    expect(raw.headers['content-type']).toBe('message/rfc822');
    expect(raw.headers['content-disposition']).toBe('attachment; filename="dead-letter-3.eml"');
    expect(raw.body).toContain('Subject: Invoice 1234 is wrong');
    const missing = await a.inject({ url: '/api/dlq/99', headers: auth() });
    expect(missing.statusCode).toBe(404);
    expect(errorOf(missing.body).code).toBe('MAILGATE_ERR_SERVER_NOT_FOUND');
  });

  it('replays a dead letter; an unknown id is a 404 with the store code', async () => {
    const { app: a, f } = app();
    const res = await a.inject({ method: 'POST', url: '/api/dlq/2/replay', headers: auth() });
    expect(res.json()).toEqual({ id: 2, status: 'queued' });
    expect(f.dead.has(2)).toBe(false);
    const again = await a.inject({ method: 'POST', url: '/api/dlq/2/replay', headers: auth() });
    expect(again.statusCode).toBe(404);
    expect(errorOf(again.body).code).toBe('MAILGATE_ERR_STORE_NOT_FOUND');
  });

  it('purges only with an explicit filter', async () => {
    const { app: a, f } = app();
    for (const url of [
      '/api/dlq',
      '/api/dlq?all=1',
      '/api/dlq?all=true&route=sales',
      '/api/dlq?ids=1,x',
      '/api/dlq?older_than=yesterday',
    ]) {
      const res = await a.inject({ method: 'DELETE', url, headers: auth() });
      expect(res.statusCode, url).toBe(400);
      expect(errorOf(res.body).code).toBe('MAILGATE_ERR_SERVER_BAD_REQUEST');
    }
    expect(f.purged).toEqual([]);
    let res = await a.inject({ method: 'DELETE', url: '/api/dlq?ids=1,2&route=support&older_than=2026-03-01T00:00:00Z', headers: auth() });
    expect(res.json()).toEqual({ purged: 2 });
    expect(f.purged[0]).toEqual({ ids: [1, 2], route: 'support', olderThan: new Date('2026-03-01T00:00:00Z') });
    res = await a.inject({ method: 'DELETE', url: '/api/dlq?all=true', headers: auth() });
    expect(res.json()).toEqual({ purged: 3 });
  });

  it('shows the stored preview of an outbox item', async () => {
    const { app: a } = app();
    const res = await a.inject({ url: '/api/preview/7', headers: auth() });
    expect(res.json()).toMatchObject({ id: 7, route: 'support', comment: { messages: [{ subject: { text: 'Invoice 1234 is wrong' } }] } });
    expect((await a.inject({ url: '/api/preview/8', headers: auth() })).statusCode).toBe(404);
  });
});

describe('errors', () => {
  it('answers unknown endpoints and unexpected failures with coded JSON', async () => {
    const f = fixture();
    f.deps.status = async () => {
      throw new TypeError('cannot read properties of undefined');
    };
    const { app: a } = app({}, f);
    const nf = await a.inject('/api/nothing-here');
    expect(nf.statusCode).toBe(404);
    expect(errorOf(nf.body)).toEqual({ code: 'MAILGATE_ERR_SERVER_NOT_FOUND', message: 'No endpoint GET /api/nothing-here.' });
    const boom = await a.inject({ url: '/api/status', headers: auth() });
    expect(boom.statusCode).toBe(500);
    const err = errorOf(boom.body);
    expect(err.code).toBe('MAILGATE_ERR_SERVER_INTERNAL');
    expect(err.message).not.toContain('undefined');
    expect(Object.keys(ERROR_CODES)).toContain(err.code);
  });

  it('refuses a non-positive body limit at build time', () => {
    expect(() => makeApp({ preview: { max_body_bytes: 0 } })).toThrow(/server.preview.max_body_bytes/);
  });
});

describe('logging', () => {
  it('logs wrong keys, admin changes and failures as JSON without any key', async () => {
    const chunks: string[] = [];
    const destination = new Writable({
      write(c: Buffer, _e, cb) {
        chunks.push(c.toString());
        cb();
      },
    });
    const f = fixture();
    f.deps.logger = createLogger({ level: 'debug', destination });
    f.deps.status = async () => {
      throw new Error(`connect failed: postgres://mailgate:pw-${KEY}@db/x`);
    };
    const { app: a } = app({}, f);
    await a.inject({ url: '/api/status', headers: auth('not-the-key-but-long-' + KEY) });
    await a.inject({ url: '/api/status', headers: auth() });
    await a.inject({ method: 'DELETE', url: '/api/dlq?route=sales', headers: auth() });
    const lines = chunks
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(chunks.join('')).not.toContain(KEY);
    expect(lines.find((l) => l['msg'] === 'admin API request with a wrong key')).toMatchObject({
      level: 'warn',
      component: 'server',
      url: '/api/status',
    });
    expect(lines.find((l) => l['msg'] === 'unexpected failure while answering')).toMatchObject({
      level: 'error',
      reqId: expect.any(String),
    });
    expect(lines.find((l) => l['msg'] === 'dead letters purged')).toMatchObject({ level: 'info', purged: 2, filter: { route: 'sales' } });
    expect(lines.find((l) => l['msg'] === 'admin request')).toMatchObject({ method: 'DELETE', path: '/api/dlq', status: 200 });
  });
});
