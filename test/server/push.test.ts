/**
 * Push endpoints mounted generically: an adapter registered in the runtime declares an
 * endpoint; the server hands it the exact body bytes whatever the content type, with lower-case
 * headers, and the push sink stores the message; a body over the endpoint's limit is refused
 * with 413 and a coded error before the endpoint runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// The built runtime: its parse pool runs dist/src/pipeline/worker.js (`npm run build` first).
import { loadConfig } from '../../dist/src/config/load.js';
import { createLogger } from '../../dist/src/logger.js';
import type { Adapter, Intake, PushEndpoint, PushRequest } from '../../dist/src/pipeline/types.js';
import { createRuntime, type Runtime } from '../../dist/src/runtime/index.js';
import { buildApp } from '../../dist/src/server/app.js';
import { fixture, SAMPLE } from './support.js';

const LIMIT = 4096;

function pushAdapter(seen: PushRequest[]): Adapter {
  let intake: Intake | undefined;
  const endpoint: PushEndpoint = {
    method: 'POST',
    path: '/webhooks/test-in',
    bodyLimit: LIMIT,
    async handle(req) {
      seen.push(req);
      const id = String(req.headers['x-event-id']);
      const origin = { adapter: 'test', instance: '', id, details: {} };
      const key = `test:${id}`;
      const [result] = await intake!.accept([{ raw: req.body, key, origin, route: 'in', receivedAt: new Date() }], { whenFull: 'refuse' });
      return { status: 202, headers: { 'x-item': result!.id }, body: { accepted: result!.id } };
    },
  };
  const start = async (given: Intake) => void (intake = given);
  return { kind: 'test', name: 'test-in', mode: 'push', start, endpoints: () => [endpoint] };
}

describe('push endpoints', () => {
  let rt: Runtime | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await rt?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function setup(seen: PushRequest[]) {
    dir = await mkdtemp(join(tmpdir(), 'mailgate-push-'));
    const config = loadConfig({
      env: {},
      overrides: { store: `sqlite:${join(dir, 'db.sqlite')}`, routes: [{ name: 'in', mode: 'sync', source: 'acme/in' }] } as never,
    });
    rt = await createRuntime({ config, dryRun: true, adapters: [pushAdapter(seen)], logger: createLogger(false) });
    const f = fixture();
    await rt.runAdapters(new AbortController().signal);
    f.deps.push = { endpoints: rt.endpoints() };
    return buildApp({ api_keys: [] }, f.deps as never);
  }

  it('hands the endpoint the exact bytes of any content type and sends its answer as is', async () => {
    const seen: PushRequest[] = [];
    const app = await setup(seen);
    // CRLF line ends and a byte that is not UTF-8 (Latin-1 é): nothing may be decoded or normalised on the way.
    const body = Buffer.concat([Buffer.from(SAMPLE.replace(/\n/g, '\r\n')), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a])]);
    const res = await app.inject({
      method: 'POST',
      url: '/webhooks/test-in?x=1',
      payload: body,
      headers: { 'content-type': 'message/rfc822', 'X-Event-Id': 'ev-1' },
    });
    expect(res.statusCode).toBe(202);
    expect(seen).toHaveLength(1);
    expect(Buffer.compare(seen[0]!.body, body)).toBe(0);
    expect(seen[0]!.url).toBe('/webhooks/test-in?x=1');
    expect(seen[0]!.headers['x-event-id']).toBe('ev-1');
    expect(res.headers['x-item']).toBe(res.json().accepted);
    expect(await rt!.store.outboxDepth('in')).toBe(1);

    const json = await app.inject({
      method: 'POST',
      url: '/webhooks/test-in',
      payload: '{"not":"parsed"}',
      headers: { 'content-type': 'application/json', 'x-event-id': 'ev-2' },
    });
    expect(json.statusCode).toBe(202);
    expect(seen[1]!.body.toString('utf8')).toBe('{"not":"parsed"}');
    await app.close();
  });

  it('refuses a body over the endpoint limit with 413 and a coded error, without calling it', async () => {
    const seen: PushRequest[] = [];
    const app = await setup(seen);
    const res = await app.inject({
      method: 'POST',
      url: '/webhooks/test-in',
      payload: Buffer.alloc(LIMIT + 1, 0x61),
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: { code: 'MAILGATE_ERR_SERVER_BODY_TOO_LARGE' } });
    expect(seen).toHaveLength(0);
    expect(await rt!.store.outboxDepth('in')).toBe(0);
    await app.close();
  });
});
