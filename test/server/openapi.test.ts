/**
 * GET /api/openapi.json: an OpenAPI 3.1 document generated from the zod schemas that validate
 * the requests and describe the answers. Checked two ways: every route the server registers is
 * in it (and nothing else), and the real answers of a running `mailgate serve` — admin,
 * console, preview, upload and webhook endpoints, successes and refusals — validate against the
 * schema the document gives for their status (JSON Schema 2020-12, by Ajv).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEntrySchema } from '../../adapters/webhooks/config.js';
import { providerOf } from '../../adapters/webhooks/providers.js';
import { openApiPath } from '../../src/server/openapi/document.js';
import { ADMIN_KEY, message, RAW_SECRET, startPushServe, UPLOAD_KEY, type PushServe } from '../cli/support/push-serve.js';
import { killLeftovers } from '../service/serve-process.js';
import { app as testApp } from './support.js';

type Json = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

/** Validates one real answer against the document: the status must be documented, the body must match its schema. */
function conforms(doc: Json, method: string, path: string, status: number, body: unknown): void {
  const op = doc['paths'][openApiPath(path)]?.[method];
  expect(op, `${method.toUpperCase()} ${path} is not documented`).toBeDefined();
  const answer = op.responses[String(status)];
  expect(answer, `${method.toUpperCase()} ${path} does not document ${status}`).toBeDefined();
  const schema = answer.content?.['application/json']?.schema;
  expect(schema, `${method.toUpperCase()} ${path} ${status} has no JSON schema`).toBeDefined();
  const validate = ajv.compile(schema);
  expect(
    validate(body),
    `${method.toUpperCase()} ${path} ${status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 600)}`,
  ).toBe(true);
}

describe('the OpenAPI document lists exactly the routes the server registers', () => {
  it('every route of the app (admin, console, preview, health) is documented, and every documented one exists', async () => {
    const { app } = testApp({ public_preview: false });
    const routes: string[] = [];
    app.addHook('onRoute', (r) => {
      const methods = Array.isArray(r.method) ? r.method : [r.method];
      for (const m of methods)
        if (m !== 'HEAD' && r.url.startsWith('/') && !r.url.includes('*')) routes.push(`${m.toLowerCase()} ${r.url}`);
    });
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as Json;
    expect(doc['openapi']).toBe('3.1.0');
    const documented = Object.entries(doc['paths'] as Json).flatMap(([p, ops]) => Object.keys(ops as Json).map((m) => `${m} ${p}`));
    // The pages and their scripts are HTML for people, not API.
    const api = routes.filter((r) => !/^get \/(preview|console|page)\b|^get \/$/.test(r)).map((r) => r.replace(/:(\w+)/g, '{$1}'));
    expect(new Set(api)).toEqual(new Set(documented));
    await app.close();
  });
});

describe('real answers of mailgate serve conform to its /api/openapi.json', () => {
  let push: PushServe;
  let doc: Json;
  const admin = { authorization: `Bearer ${ADMIN_KEY}` };
  const call = async (method: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${push.url}${path}`, { method, ...init });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  /** Calls and checks in one go; returns the body. */
  const conformsAt = async (method: string, route: string, path: string, init: RequestInit = {}, expected?: number): Promise<any> => {
    const { status, body } = await call(method, path, init);
    if (expected !== undefined) expect(status, `${method} ${path}: ${JSON.stringify(body)}`).toBe(expected);
    conforms(doc, method.toLowerCase(), route, status, body);
    return body;
  };

  beforeAll(async () => {
    push = await startPushServe();
    doc = (await call('GET', '/api/openapi.json')).body as Json;
  });
  afterAll(() => {
    push?.serve.child.kill('SIGKILL');
    killLeftovers();
  });

  it('is served without a key, as OpenAPI 3.1, with the configured upload and webhook endpoints', () => {
    expect(doc['openapi']).toBe('3.1.0');
    expect(doc['info']).toMatchObject({ title: 'mailgate', license: { identifier: 'MIT' } });
    for (const path of [
      '/webhooks/raw-in',
      '/webhooks/mailgun-in',
      '/webhooks/postmark-in',
      '/webhooks/sendgrid-in',
      '/api/upload/uploads',
      '/api/upload/uploads/{id}',
    ])
      expect(Object.keys(doc['paths']), path).toContain(path);
    expect(doc['paths']['/api/dlq']['get']['parameters'].map((p: Json) => p['name'])).toEqual(['route', 'limit', 'after']);
    expect(doc['paths']['/api/dlq']['get']['security']).toEqual([{ adminKey: [] }]);
  });

  it('upload and webhook endpoints: stored, refused, unknown', async () => {
    const uploaded = await conformsAt(
      'POST',
      '/api/upload/uploads',
      '/api/upload/uploads',
      {
        headers: { authorization: `Bearer ${UPLOAD_KEY}`, 'content-type': 'message/rfc822' },
        body: message(1),
      },
      202,
    );
    // A file that cannot be read is stored as a dead letter; its answer carries the coded reason.
    const boundary = 'openapi-dead-letter';
    const broken = await conformsAt(
      'POST',
      '/api/upload/uploads',
      '/api/upload/uploads',
      {
        headers: { authorization: `Bearer ${UPLOAD_KEY}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: [
          `--${boundary}`,
          'Content-Disposition: form-data; name="file"; filename="broken.msg"',
          'Content-Type: application/vnd.ms-outlook',
          '',
          'not an outlook file at all',
          `--${boundary}--`,
          '',
        ].join('\r\n'),
      },
      202,
    );
    expect(broken.results[0].dead).toMatchObject({ code: 'MAILGATE_ERR_INPUT_MSG_INVALID' });
    await conformsAt(
      'GET',
      '/api/upload/uploads/:id',
      `/api/upload/uploads/${uploaded.results[0].id}`,
      { headers: { authorization: `Bearer ${UPLOAD_KEY}` } },
      200,
    );
    await conformsAt(
      'GET',
      '/api/upload/uploads/:id',
      '/api/upload/uploads/nope',
      { headers: { authorization: `Bearer ${UPLOAD_KEY}` } },
      404,
    );
    await conformsAt(
      'POST',
      '/api/upload/uploads',
      '/api/upload/uploads',
      { headers: { 'content-type': 'message/rfc822' }, body: message(2) },
      401,
    );
    await conformsAt(
      'POST',
      '/api/upload/uploads',
      '/api/upload/uploads',
      { headers: { authorization: `Bearer ${UPLOAD_KEY}`, 'content-type': 'text/plain' }, body: 'x' },
      415,
    );

    const entry = webhookEntrySchema.parse({ name: 'raw-in', provider: 'raw', route: 'inbound', hmac_secret: RAW_SECRET });
    const signed = providerOf(entry).simulate(Buffer.from(message(3)), entry, { url: `${push.url}/webhooks/raw-in`, now: Date.now() });
    await conformsAt('POST', '/webhooks/raw-in', '/webhooks/raw-in', { headers: signed.headers, body: new Uint8Array(signed.body) }, 200);
    const forged = {
      ...signed.headers,
      'x-mailgate-signature': signed.headers['x-mailgate-signature']!.replace(/v2=\w+/, `v2=${'0'.repeat(64)}`),
    };
    const refused = await conformsAt(
      'POST',
      '/webhooks/raw-in',
      '/webhooks/raw-in',
      { headers: forged, body: new Uint8Array(signed.body) },
      403,
    );
    expect(refused.error.code).toBe('MAILGATE_ERR_WEBHOOK_FORGED');
  });

  it('preview endpoints: a message, a file of two, a file that is not mail, its thread, a wrong type, an unknown item', async () => {
    const previewed = await conformsAt(
      'POST',
      '/api/preview',
      '/api/preview',
      { headers: { ...admin, 'content-type': 'message/rfc822' }, body: message(4) },
      200,
    );
    await conformsAt(
      'POST',
      '/api/preview/threads',
      '/api/preview/threads',
      {
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ comments: [previewed.comment] }),
      },
      200,
    );
    await conformsAt('POST', '/api/preview', '/api/preview', { headers: { ...admin, 'content-type': 'text/plain' }, body: 'x' }, 415);
    const mbox = `From a@example.com Mon Mar  4 09:00:00 2024\n${message(5)}\nFrom b@example.com Mon Mar  4 09:00:00 2024\n${message(6)}`;
    const octets = { ...admin, 'content-type': 'application/octet-stream' };
    const file = await conformsAt('POST', '/api/preview/file', '/api/preview/file?name=two.mbox', { headers: octets, body: mbox }, 200);
    expect(file.messages).toHaveLength(2);
    const json = await conformsAt('POST', '/api/preview/file', '/api/preview/file?name=a.json', { headers: octets, body: '{"a":1}' }, 200);
    expect(json.messages[0].error.code).toBe('MAILGATE_ERR_INPUT_UNSUPPORTED');
    await conformsAt('GET', '/api/preview/:id', '/api/preview/999999', { headers: admin }, 404);
  });

  it('admin and console endpoints: status, items, one item, its stored preview, overview, dead letters, refusals', async () => {
    await conformsAt('GET', '/api/status', '/api/status', { headers: admin }, 200);
    await conformsAt('GET', '/api/status', '/api/status', {}, 401);
    let page: any;
    for (let i = 0; i < 100 && !(page?.items.length > 0); i++) {
      page = await conformsAt('GET', '/api/items', '/api/items?limit=10', { headers: admin }, 200);
      if (!(page.items.length > 0)) await new Promise((r) => setTimeout(r, 100));
    }
    const id = page.items[0].id as number;
    await conformsAt('GET', '/api/items/:id', `/api/items/${id}`, { headers: admin }, 200);
    await conformsAt('GET', '/api/preview/:id', `/api/preview/${id}`, { headers: admin }, 200);
    await conformsAt('GET', '/api/items/:id', '/api/items/999999', { headers: admin }, 404);
    await conformsAt('GET', '/api/items', '/api/items?state=lost', { headers: admin }, 400);
    await conformsAt('GET', '/api/overview', '/api/overview', { headers: admin }, 200);
    await conformsAt('GET', '/api/dlq', '/api/dlq', { headers: admin }, 200);
    await conformsAt('GET', '/api/dlq', '/api/dlq?limit=abc', { headers: admin }, 400);
    await conformsAt('GET', '/api/dlq/:id', '/api/dlq/999999', { headers: admin }, 404);
    await conformsAt('DELETE', '/api/dlq', '/api/dlq?ids=999999', { headers: admin }, 200);
    await conformsAt(
      'POST',
      '/api/dlq/replay',
      '/api/dlq/replay',
      {
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ ids: [999999] }),
      },
      200,
    );
    await conformsAt('GET', '/api/predictions', '/api/predictions', { headers: admin });
    await conformsAt('GET', '/livez', '/livez', {}, 200);
    await conformsAt('GET', '/readyz', '/readyz');
  });
});
