/**
 * Attacks on the listener and the preview endpoints over real sockets: a slow-loris client is
 * cut, a silent one too, a third concurrent preview is refused 503 while two run, and an
 * over-limit preview is refused 413 before its body is read.
 */
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { app as makeApp, auth, KEY, SAMPLE } from './support.js';
import type { ServerOptions } from '../../src/server/index.js';
import { buildEmulatorApp, EMULATOR_IDLE_TIMEOUT_MS } from '../../src/emulator/app.js';
import { resolveOptions } from '../../src/emulator/options.js';
import { EmulatorState } from '../../src/emulator/state.js';
import { SERVER_DEFAULTS } from '../../src/server/defaults.js';

let current: FastifyInstance | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

async function listening(options: Partial<ServerOptions> = {}, edit?: Parameters<typeof makeApp>[1]) {
  const { app, f } = makeApp(options, edit);
  current = app;
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, f, port: (app.server.address() as AddressInfo).port };
}

interface Raw {
  socket: Socket;
  /** Everything the server sent so far. */
  received: () => string;
  closed: Promise<void>;
}

async function raw(port: number): Promise<Raw> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', r));
  let text = '';
  socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  return { socket, received: () => text, closed };
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('slow clients', () => {
  it('slow-loris: a client dripping header lines forever is cut after headers_timeout_ms', async () => {
    const { port } = await listening({ headers_timeout_ms: 300, request_timeout_ms: 300, idle_timeout_ms: 60_000 });
    const c = await raw(port);
    c.socket.write(`GET /livez HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    let open = true;
    void c.closed.then(() => (open = false));
    let lines = 0;
    // Each line comes well within the idle timeout: only the header deadline can end this.
    while (open) {
      c.socket.write(`X-Drip-${lines++}: a\r\n`);
      await tick(50);
    }
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a silent connection is closed after idle_timeout_ms', async () => {
    const { port } = await listening({ idle_timeout_ms: 200 });
    const c = await raw(port);
    await c.closed;
    expect(c.received()).toBe('');
  });
});

describe('preview limits', () => {
  it('starvation: a third concurrent preview gets 503 with Retry-After while two run, and a slot frees when one ends', async () => {
    const { f, port } = await listening({ preview: { max_concurrent: 2 } });
    const real = f.deps.preview;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let started = 0;
    f.deps.preview = async (bytes, request) => {
      started++;
      await held;
      return real(bytes, request);
    };
    const send = () =>
      fetch(`http://127.0.0.1:${port}/api/preview`, {
        method: 'POST',
        headers: { 'content-type': 'message/rfc822', ...auth() },
        body: SAMPLE,
      });
    const running = [send(), send()];
    while (started < 2) await tick(5);
    const third = await send();
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('1');
    expect(((await third.json()) as { error: { code: string } }).error.code).toBe('MAILGATE_ERR_SERVER_BUSY');
    release();
    expect((await Promise.all(running)).map((r) => r.status)).toEqual([200, 200]);
    expect((await send()).status).toBe(200);
  });

  it('an over-limit preview gets 413 from its Content-Length, before the body is sent', async () => {
    const { port } = await listening({ preview: { max_body_bytes: 64 * 1024 } });
    const c = await raw(port);
    const head = [
      'POST /api/preview HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      'Content-Type: message/rfc822',
      `Authorization: Bearer ${KEY}`,
      `Content-Length: ${100 * 1024 * 1024}`,
      '',
      '',
    ].join('\r\n');
    c.socket.write(head);
    while (!c.received().includes('\r\n\r\n')) await tick(5);
    expect(c.received()).toMatch(/^HTTP\/1\.1 413/);
    expect(c.received()).toContain('MAILGATE_ERR_SERVER_BODY_TOO_LARGE');
    c.socket.destroy();
  });

  it('an over-limit chunked preview is cut soon after the limit, not buffered to its end', async () => {
    const limit = 64 * 1024;
    const { port } = await listening({ preview: { max_body_bytes: limit } });
    const c = await raw(port);
    c.socket.write(
      [
        'POST /api/preview HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        'Content-Type: message/rfc822',
        `Authorization: Bearer ${KEY}`,
        'Transfer-Encoding: chunked',
        '',
        '',
      ].join('\r\n'),
    );
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    let sent = 0;
    // Sends until the answer comes (or the server closes); 100 MiB would be the attack's size.
    while (!c.received().includes('\r\n\r\n') && !c.socket.destroyed && sent < 100 * 1024 * 1024) {
      const ok = c.socket.write(`${chunk.length.toString(16)}\r\n`) && c.socket.write(chunk) && c.socket.write('\r\n');
      sent += chunk.length;
      // The server may stop reading once it answered: wait for room or for the answer.
      if (!ok) while (c.socket.writableNeedDrain && !c.received().includes('\r\n\r\n') && !c.socket.destroyed) await tick(5);
      await tick(1);
    }
    // Answered 413, or (the client still writing) the connection was reset first.
    if (c.received() !== '') expect(c.received()).toMatch(/^HTTP\/1\.1 413/);
    else expect(c.socket.destroyed).toBe(true);
    expect(sent).toBeLessThan(limit * 64);
    c.socket.destroy();
  });

  it('the preview body limit defaults to 4 MiB, not the 50 MiB mail limit', async () => {
    const { port } = await listening();
    const body = Buffer.alloc(4 * 1024 * 1024 + 1, 0x61);
    const res = await fetch(`http://127.0.0.1:${port}/api/preview/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth() },
      body,
    });
    expect(res.status).toBe(413);
  });
});

describe('the emulator listener', () => {
  it('slow clients: bounds request, header, idle and keep-alive time like the server (fastify leaves them unbounded)', async () => {
    const app = buildEmulatorApp(new EmulatorState(), resolveOptions({ token: 'emulator-token' }));
    try {
      await app.ready();
      expect(app.server.requestTimeout).toBe(SERVER_DEFAULTS.request_timeout_ms);
      expect(app.server.headersTimeout).toBe(SERVER_DEFAULTS.headers_timeout_ms);
      expect(app.server.timeout).toBe(EMULATOR_IDLE_TIMEOUT_MS);
      expect(app.server.keepAliveTimeout).toBe(SERVER_DEFAULTS.keep_alive_timeout_ms);
    } finally {
      await app.close();
    }
  });
});
