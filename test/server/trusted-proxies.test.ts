/**
 * `server.trusted_proxies`: the per-client push bound (`server.push.max_per_client`) counts the
 * client `X-Forwarded-For` names only when the connection comes from a configured proxy; from
 * any other peer the header is ignored, so a sender cannot escape its bound by inventing
 * addresses, and clients behind one proxy are not lumped together as the proxy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PushEndpoint } from '../../src/pipeline/types.js';
import { buildApp } from '../../src/server/index.js';
import { fixture, KEY } from './support.js';

const PROXY = '10.0.0.7';

/** A push endpoint that holds every request open until `open()`: what stays admitted is counted. */
function heldEndpoint() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const endpoint: PushEndpoint = {
    method: 'POST',
    path: '/hook',
    bodyLimit: 1024,
    handle: async () => {
      await gate;
      return { status: 200, body: { ok: true } };
    },
  };
  return { endpoint, open };
}

const apps: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function app(trusted: string[]) {
  const held = heldEndpoint();
  const f = fixture();
  f.deps.push = { endpoints: [held.endpoint] };
  const a = buildApp({ api_keys: [KEY], trusted_proxies: trusted, push: { max_per_client: 1 } }, f.deps as never);
  apps.push(a);
  const post = (peer: string, forwardedFor?: string) =>
    a.inject({
      method: 'POST',
      url: '/hook',
      payload: 'x',
      remoteAddress: peer,
      headers: { 'content-type': 'text/plain', ...(forwardedFor !== undefined && { 'x-forwarded-for': forwardedFor }) },
    });
  const refusals = async (reason: string) => {
    const text = await f.metrics.registry.metrics();
    const m = new RegExp(`mailgate_push_refused_total\\{listener="private",reason="${reason}"\\} (\\d+)`).exec(text);
    return Number(m?.[1] ?? 0);
  };
  return { post, open: held.open, refusals };
}

describe('server.trusted_proxies and the per-client push bound', () => {
  it('from a trusted proxy, each X-Forwarded-For client has its own bound', async () => {
    const s = app([PROXY]);
    const first = s.post(PROXY, '203.0.113.5');
    const other = s.post(PROXY, '198.51.100.9, 203.0.113.200');
    await new Promise((r) => setTimeout(r, 50));
    const again = await s.post(PROXY, '203.0.113.5');
    expect(again.statusCode).toBe(503);
    expect(again.headers['retry-after']).toBe('5');
    expect(again.json()).toMatchObject({ error: { code: 'MAILGATE_ERR_SERVER_BUSY' } });
    expect(await s.refusals('client')).toBe(1);
    s.open();
    // The client behind the proxy that was not at its bound was admitted and answered.
    expect((await first).statusCode).toBe(200);
    expect((await other).statusCode).toBe(200);
  });

  it('from a peer that is not a trusted proxy, X-Forwarded-For is ignored: the peer is the client', async () => {
    const s = app([PROXY]);
    const first = s.post('192.0.2.50', '203.0.113.5');
    await new Promise((r) => setTimeout(r, 50));
    const invented = await s.post('192.0.2.50', '203.0.113.99');
    expect(invented.statusCode).toBe(503);
    expect(await s.refusals('client')).toBe(1);
    s.open();
    expect((await first).statusCode).toBe(200);
  });

  it('with no trusted proxies (the default), no peer can choose its client address', async () => {
    const s = app([]);
    const first = s.post(PROXY, '203.0.113.5');
    await new Promise((r) => setTimeout(r, 50));
    expect((await s.post(PROXY, '203.0.113.6')).statusCode).toBe(503);
    s.open();
    expect((await first).statusCode).toBe(200);
  });

  it('a CIDR range names the proxies', async () => {
    const s = app(['10.0.0.0/24']);
    const first = s.post('10.0.0.200', '203.0.113.5');
    await new Promise((r) => setTimeout(r, 50));
    const other = s.post('10.0.0.201', '203.0.113.6');
    await new Promise((r) => setTimeout(r, 50));
    expect((await s.post('10.0.0.9', '203.0.113.5')).statusCode).toBe(503);
    s.open();
    expect((await first).statusCode).toBe(200);
    expect((await other).statusCode).toBe(200);
  });
});
