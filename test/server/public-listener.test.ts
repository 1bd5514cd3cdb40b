/**
 * `server.public_listen`: the listener outsiders reach serves the push endpoints marked public
 * and /livez, nothing else; the admin API, console, metrics, readiness and preview stay on the
 * private listener.
 */
import { describe, expect, it } from 'vitest';
import { createUploadAdapter } from '../../adapters/upload/adapter.js';
import { createLogger } from '../../src/logger.js';
import type { Intake, PushEndpoint } from '../../src/pipeline/types.js';
import { startOn } from '../support/push-start.js';
import { buildApp } from '../../src/server/index.js';
import { auth, fixture, KEY } from './support.js';

const sink: Intake = {
  accept: async (batch) => batch.map((_, i) => ({ id: `i${i}`, duplicate: false })),
  checkpoint: async () => undefined,
  item: async () => undefined,
};

function endpoints(): PushEndpoint[] {
  const upload = createUploadAdapter(
    { name: 'desk', route: 'in', api_keys: ['upload-key-0123456789abcdef'] },
    { logger: createLogger(false) },
  );
  startOn(upload, sink);
  const internal: PushEndpoint = { method: 'POST', path: '/internal/hook', bodyLimit: 10, handle: async () => ({ status: 200 }) };
  return [...upload.endpoints!(), internal];
}

describe('public listener', () => {
  it('serves /livez and the public push endpoints only', async () => {
    const f = fixture();
    f.deps.push = { endpoints: endpoints() };
    const app = buildApp({ api_keys: [KEY], public_preview: true, role: 'public', listen_host: '127.0.0.1' }, f.deps as never);
    expect((await app.inject({ method: 'GET', url: '/livez', headers: { host: 'mail.example.com' } })).statusCode).toBe(200);
    const upload = await app.inject({ method: 'POST', url: '/api/upload/desk', payload: 'x', headers: { host: 'mail.example.com' } });
    expect(upload.statusCode).toBe(401);
    for (const url of ['/readyz', '/metrics', '/console', '/preview', '/api/status', '/api/items', '/']) {
      expect((await app.inject({ method: 'GET', url, headers: auth() })).statusCode, url).toBe(404);
    }
    expect((await app.inject({ method: 'POST', url: '/api/preview', payload: 'x' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'POST', url: '/internal/hook', payload: 'x' })).statusCode).toBe(404);
    await app.close();
  });

  it('keeps everything on the private listener', async () => {
    const f = fixture();
    f.deps.push = { endpoints: endpoints() };
    const app = buildApp({ api_keys: [KEY] }, f.deps as never);
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/api/status', headers: auth() })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/internal/hook', payload: 'x' })).statusCode).toBe(200);
    await app.close();
  });
});
