/**
 * Regression: push endpoints buffered whole bodies before checking keys, with no bound across
 * requests (60 unauthenticated 39 MB uploads took the RSS from 0.5 to 2.3 GB). A credential in
 * the headers is checked before the body is read, and a listener's push budget (requests, bytes
 * in flight, requests per client) refuses with 503 + Retry-After before reading. Asserted on
 * work done: how much of a declared body the client had sent when the answer came.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createUploadAdapter } from '../../adapters/upload/adapter.js';
import { createWebhookAdapter } from '../../adapters/webhooks/index.js';
import { createLogger } from '../../src/logger.js';
import type { PushEndpoint, Intake } from '../../src/pipeline/types.js';
import { startOn } from '../support/push-start.js';
import { buildApp, type ServerOptions } from '../../src/server/index.js';
import { PushBudget } from '../../src/server/push-budget.js';
import { fixture } from './support.js';

const UPLOAD_KEY = 'upload-key-0123456789abcdef';
const MIB = 1024 * 1024;

const sink: Intake = {
  accept: async (batch) => batch.map((_, i) => ({ id: `i${i}`, duplicate: false })),
  checkpoint: async () => undefined,
  item: async () => undefined,
};

function endpoints(): PushEndpoint[] {
  const logger = createLogger(false);
  const upload = createUploadAdapter({ name: 'desk', route: 'in', api_keys: [UPLOAD_KEY] }, { logger });
  const postmark = createWebhookAdapter(
    { name: 'pm-in', provider: 'postmark', route: 'in', basic_auth: { user: 'pm', pass: 'postmark-pass-0123456789' } },
    { logger },
  );
  const sendgrid = createWebhookAdapter(
    { name: 'sg-in', provider: 'sendgrid', route: 'in', basic_auth: { user: 'sg', pass: 'sendgrid-pass-0123456789' } },
    { logger },
  );
  const sparkpost = createWebhookAdapter(
    { name: 'sp-in', provider: 'sparkpost', route: 'in', auth_token: 'sparkpost-token-0123456789' },
    { logger },
  );
  const raw = createWebhookAdapter(
    { name: 'raw-in', provider: 'raw', route: 'in', bearer_keys: ['raw-bearer-key-0123456789'] },
    { logger },
  );
  const all = [upload, postmark, sendgrid, sparkpost, raw];
  for (const adapter of all) startOn(adapter, sink);
  return all.flatMap((adapter) => adapter.endpoints!());
}

let closeApp: (() => Promise<unknown>) | undefined;
afterEach(async () => {
  await closeApp?.();
  closeApp = undefined;
});

async function listening(options: Partial<ServerOptions> = {}) {
  const f = fixture();
  f.deps.push = { endpoints: endpoints() };
  const app = buildApp({ api_keys: [], ...options }, f.deps as never);
  await app.listen({ host: '127.0.0.1', port: 0 });
  closeApp = () => app.close();
  const { port } = app.server.address() as { port: number };
  return { port, metrics: f.deps.metrics };
}

interface Answer {
  head: string;
  /** Body bytes the client had written when the answer arrived. */
  sent: number;
  socket: Socket;
}

/** Declares `declared` body bytes and sends them in 64 KiB slices until the server answers (or the whole body is sent). */
function sendUntilAnswered(port: number, path: string, headers: Record<string, string>, declared: number, hold = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let sent = 0;
    let answer = '';
    const lines = Object.entries({ host: `127.0.0.1:${port}`, 'content-length': String(declared), ...headers }).map(
      ([k, v]) => `${k}: ${v}`,
    );
    socket.on('error', () => undefined);
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
      if (answer.includes('\r\n\r\n')) resolve({ head: answer, sent, socket });
    });
    socket.on('close', () => (answer === '' ? reject(new Error('closed without an answer')) : undefined));
    socket.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const pump = (): void => {
      if (answer !== '' || socket.destroyed) return;
      // `hold`: an open request that sends nothing more (it holds its share of the budget).
      if (hold || sent >= declared) return;
      const n = Math.min(chunk.length, declared - sent);
      sent += n;
      socket.write(chunk.subarray(0, n), () => setImmediate(pump));
    };
    pump();
    if (hold) resolve({ head: '', sent, socket });
  });
}

const status = (a: Answer) => Number(/^HTTP\/1\.1 (\d{3})/.exec(a.head)?.[1]);

describe('push bodies before keys (unauthenticated buffering)', () => {
  it('answers an upload without a key 401 before its body is read', async () => {
    const { port } = await listening();
    const a = await sendUntilAnswered(port, '/api/upload/desk', { 'content-type': 'application/mbox' }, 32 * MIB);
    a.socket.destroy();
    expect(status(a)).toBe(401);
    expect(a.head).toContain('MAILGATE_ERR_UPLOAD_UNAUTHORIZED');
    expect(a.sent).toBeLessThan(8 * MIB);
  });

  it('answers a Postmark post with wrong basic auth before its body is read', async () => {
    const { port } = await listening();
    const wrong = `Basic ${Buffer.from('pm:wrong').toString('base64')}`;
    const a = await sendUntilAnswered(port, '/webhooks/pm-in', { 'content-type': 'application/json', authorization: wrong }, 32 * MIB);
    a.socket.destroy();
    expect(status(a)).toBe(403);
    expect(a.sent).toBeLessThan(8 * MIB);
  });

  it.each([
    ['SendGrid, wrong basic auth', '/webhooks/sg-in', { authorization: `Basic ${Buffer.from('sg:wrong').toString('base64')}` }],
    ['SendGrid, no basic auth', '/webhooks/sg-in', {}],
    ['SparkPost, wrong token', '/webhooks/sp-in', { 'x-messagesystems-webhook-token': 'wrong' }],
    ['raw, wrong bearer key', '/webhooks/raw-in', { authorization: 'Bearer wrong-key-0123456789abc' }],
    ['raw, no bearer key', '/webhooks/raw-in', {}],
  ])('answers %s before its body is read', async (_, path, headers: Record<string, string>) => {
    const { port } = await listening();
    const a = await sendUntilAnswered(port, path, { 'content-type': 'application/json', ...headers }, 32 * MIB);
    a.socket.destroy();
    expect([401, 403]).toContain(status(a));
    expect(a.sent).toBeLessThan(8 * MIB);
  });

  it('refuses a client over its open-request bound with 503 and Retry-After before reading, and counts it', async () => {
    const { port, metrics } = await listening({ push: { max_per_client: 1 } });
    const key = { authorization: `Bearer ${UPLOAD_KEY}`, 'content-type': 'application/mbox' };
    const held = await sendUntilAnswered(port, '/api/upload/desk', key, 4 * MIB, true);
    const a = await sendUntilAnswered(port, '/api/upload/desk', key, 32 * MIB);
    held.socket.destroy();
    a.socket.destroy();
    expect(status(a)).toBe(503);
    expect(a.head.toLowerCase()).toContain('retry-after: 5');
    expect(a.head).toContain('MAILGATE_ERR_SERVER_BUSY');
    expect(a.sent).toBeLessThan(8 * MIB);
    expect(await metrics.registry.metrics()).toMatch(/mailgate_push_refused_total\{listener="private",reason="client"\} 1/);
  });

  it('refuses a request that would pass the bytes in flight with 503 before reading', async () => {
    const { port } = await listening({ push: { max_bytes_in_flight: 20 * MIB } });
    const key = { authorization: `Bearer ${UPLOAD_KEY}`, 'content-type': 'application/mbox' };
    const held = await sendUntilAnswered(port, '/api/upload/desk', key, 16 * MIB, true);
    const a = await sendUntilAnswered(port, '/api/upload/desk', { ...key, 'x-forwarded-for': '192.0.2.7' }, 16 * MIB);
    held.socket.destroy();
    a.socket.destroy();
    expect(status(a)).toBe(503);
    expect(a.sent).toBeLessThan(8 * MIB);
  });
});

describe('PushBudget', () => {
  it('counts requests, bytes and clients, and frees them on release', () => {
    const budget = new PushBudget({ maxRequests: 2, maxBytes: 100, maxPerClient: 1 });
    const a = budget.admit('10.0.0.1', 60);
    expect(a.ok).toBe(true);
    expect(budget.admit('10.0.0.1', 1)).toMatchObject({ ok: false, reason: 'client' });
    expect(budget.admit('10.0.0.2', 50)).toMatchObject({ ok: false, reason: 'bytes' });
    const b = budget.admit('10.0.0.2', 40);
    expect(budget.admit('10.0.0.3', 0)).toMatchObject({ ok: false, reason: 'requests' });
    if (a.ok) budget.release(a.ticket);
    if (b.ok) budget.release(b.ticket);
    expect(budget.inFlight()).toEqual({ requests: 0, bytes: 0, clients: 0 });
    // A single body larger than the whole budget still gets in when nothing else is in flight.
    expect(budget.admit('10.0.0.4', 1000).ok).toBe(true);
  });
});
