/**
 * DNS rebinding: a page on evil.example re-points its name at 127.0.0.1 and reads the
 * loopback server with `Host: evil.example`. A loopback listener answers only to its own
 * names (and server.allowed_hosts); any other Host gets 421 with a coded error.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { hostAllowed } from '../../src/server/guards.js';
import type { ServerOptions } from '../../src/server/index.js';
import type { PushEndpoint } from '../../src/pipeline/types.js';
import { app as makeApp, fixture } from './support.js';

let current: FastifyInstance | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

async function listening(options: Partial<ServerOptions>): Promise<number> {
  const { app } = makeApp(options);
  current = app;
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

function get(port: number, path: string, host: string | undefined): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    const req = request({ host: '127.0.0.1', port, path, headers, setHost: host !== undefined }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    if (host !== undefined) req.setHeader('host', host);
    req.on('error', reject);
    req.end();
  });
}

describe('Host header on a loopback listener', () => {
  it('DNS rebinding: /metrics and /api/preview under a foreign Host get 421 MAILGATE_ERR_SERVER_MISDIRECTED', async () => {
    const port = await listening({ listen_host: '127.0.0.1', public_preview: true });
    for (const path of ['/metrics', '/livez', '/preview']) {
      const res = await get(port, path, `evil.example:${port}`);
      expect(res.status).toBe(421);
      expect(JSON.parse(res.body).error.code).toBe('MAILGATE_ERR_SERVER_MISDIRECTED');
    }
    expect((await get(port, '/metrics', `127.0.0.1:${port + 1}`)).status).toBe(421);
  });

  it('answers localhost, 127.0.0.1 and [::1] with its port, and server.allowed_hosts', async () => {
    const port = await listening({ listen_host: '127.0.0.1', allowed_hosts: ['mailgate.internal', 'proxy.lan:8443'] });
    for (const host of [
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
      `LOCALHOST:${port}`,
      'mailgate.internal',
      'mailgate.internal:9',
      'proxy.lan:8443',
    ]) {
      expect((await get(port, '/livez', host)).status, host).toBe(200);
    }
    expect((await get(port, '/livez', 'proxy.lan:9')).status).toBe(421);
  });

  it('push endpoints answer any Host: a provider comes through a proxy under a public name and signs each request', async () => {
    const f = fixture();
    const endpoint: PushEndpoint = {
      method: 'POST',
      path: '/webhooks/test-in',
      bodyLimit: 1024,
      handle: async () => ({ status: 202, body: { ok: true } }),
    };
    f.deps.push = { endpoints: [endpoint] };
    const { app } = makeApp({ listen_host: '127.0.0.1' }, f);
    current = app;
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as AddressInfo).port;
    const res = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/webhooks/test-in',
          headers: { host: 'hooks.example.com', 'content-type': 'text/plain' },
        },
        (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('x');
    });
    expect(res).toBe(202);
    expect((await get(port, '/metrics', 'hooks.example.com')).status).toBe(421);
  });

  it('does not check Host when listening on a non-loopback address', async () => {
    const port = await listening({ listen_host: '0.0.0.0' });
    expect((await get(port, '/livez', 'mailgate.example.com')).status).toBe(200);
  });

  it('matches names and ports exactly', () => {
    expect(hostAllowed('localhost', 80, [])).toBe(true);
    expect(hostAllowed('localhost', 8080, [])).toBe(false);
    expect(hostAllowed('localhost.evil.example:8080', 8080, [])).toBe(false);
    expect(hostAllowed('127.0.0.1.nip.io:8080', 8080, [])).toBe(false);
    expect(hostAllowed(undefined, 8080, [])).toBe(false);
    expect(hostAllowed('', 8080, ['mailgate.internal'])).toBe(false);
  });
});
