/**
 * `server.public_listen` through `startService` (the compiled service, a real emulator and
 * SQLite): a second listener serves the push endpoints and /livez alone, an upload through it is
 * stored and delivered, and the admin API, console, metrics, readiness and preview answer only on
 * `server.listen`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import type { Service } from '../../src/service/index.js';
import { textMessage } from '../imap/messages.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { eventually, ROOT } from './serve-process.js';

/** The compiled service: its parse pool needs the compiled worker (`npm test` builds first). */
const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
const startService: typeof import('../../src/service/index.js').startService = async (...args) =>
  ((await import(SERVICE)) as typeof import('../../src/service/index.js')).startService(...args);

const ADMIN_KEY = 'admin-key-0123456789abcdef';
const UPLOAD_KEY = 'upload-key-0123456789abcdef';
let dir: string;
let emu: StartedEmulator;
let service: Service;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-public-listen-'));
  emu = await startEmulator({ autoCreateSources: true });
  const config = loadConfig({
    overrides: {
      store: `sqlite:${join(dir, 'mailgate.db')}`,
      api: { url: emu.url, token: emu.token },
      server: { listen: '127.0.0.1:0', public_listen: '127.0.0.1:0', api_keys: [ADMIN_KEY], public_preview: true },
      delivery: { flush_ms: 0 },
      routes: [{ name: 'support', source: 'acme/support' }],
      adapters: { upload: [{ name: 'desk', route: 'support', api_keys: [UPLOAD_KEY] }] },
    } as never,
  });
  service = await startService(config, { logger: createLogger(false) });
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await emu?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const admin = { authorization: `Bearer ${ADMIN_KEY}` };

describe('server.public_listen through startService', () => {
  it('is a second listener of its own', () => {
    expect(service.publicUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(service.publicUrl).not.toBe(service.url);
  });

  it('takes an upload, which is stored and delivered, and answers /livez', async () => {
    const res = await fetch(`${service.publicUrl}/api/upload/desk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${UPLOAD_KEY}`, 'content-type': 'message/rfc822' },
      body: textMessage(1),
    });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { results: Array<{ id: string }> }).results[0]!.id;
    const state = async () => {
      const r = await fetch(`${service.publicUrl}/api/upload/desk/${id}`, { headers: { authorization: `Bearer ${UPLOAD_KEY}` } });
      return r.status === 200 ? ((await r.json()) as { state: string }).state : `HTTP ${r.status}`;
    };
    await eventually(async () => (await state()) === 'delivered', 'the item delivered');
    expect(emu.emulator.stats().comments).toBe(1);
    expect((await fetch(`${service.publicUrl}/livez`)).status).toBe(200);
    // Without the key the public listener refuses at once.
    expect((await fetch(`${service.publicUrl}/api/upload/desk`, { method: 'POST', body: 'x' })).status).toBe(401);
  });

  it('serves nothing else: admin API, console, metrics, readiness and preview are 404 there and answer on server.listen', async () => {
    for (const path of ['/api/status', '/api/items', '/metrics', '/readyz', '/console', '/preview', '/api/openapi.json']) {
      expect((await fetch(`${service.publicUrl}${path}`, { headers: admin })).status, path).toBe(404);
      expect((await fetch(`${service.url}${path}`, { headers: admin })).status, path).toBe(200);
    }
    const preview = { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: textMessage(2) };
    expect((await fetch(`${service.publicUrl}/api/preview`, preview)).status).toBe(404);
    expect((await fetch(`${service.url}/api/preview`, preview)).status).toBe(200);
  });
});
