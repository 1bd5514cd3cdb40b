/**
 * The Graph change-notification receiver in the server's OpenAPI document: its path, the
 * validation handshake's query parameter, and answers that conform to what it documents.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { createGraphAdapters } from '../../adapters/graph/index.js';
import { graphEntrySchema } from '../../adapters/graph/config.js';
import { buildApp } from '../../src/server/index.js';
import { fixture } from '../server/support.js';
import { quiet } from './setup.js';

const CLIENT_STATE = 'client-state-0123456789abcdef';

describe('Graph notification receiver in /api/openapi.json', () => {
  it('is documented at the path of notifications.url with the handshake, 202 and a conforming 400', async () => {
    const entry = graphEntrySchema.parse({
      name: 'm365',
      route: 'support',
      tenant_id: 't',
      client_id: 'c',
      auth: { client_secret: 's' },
      mailboxes: [{ user: 'support@contoso.test' }],
      notifications: { url: 'https://mailgate.contoso.test/graph/m365/notifications', client_state: CLIENT_STATE },
    });
    const [adapter] = createGraphAdapters(entry, { logger: quiet });
    const f = fixture();
    f.deps.push = { endpoints: adapter!.endpoints() };
    const app = buildApp({ api_keys: [] }, f.deps as never);
    const doc = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const op = doc.paths['/graph/m365/notifications'].post;
    expect(op.operationId).toBe('graphNotifications_m365');
    expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['query:validationToken']);
    expect(Object.keys(op.responses).sort()).toEqual(['200', '202', '400']);
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/plain']);

    const handshake = await app.inject({ method: 'POST', url: '/graph/m365/notifications?validationToken=abc%20def' });
    expect(handshake.statusCode).toBe(200);
    expect(handshake.body).toBe('abc def');
    const taken = await app.inject({
      method: 'POST',
      url: '/graph/m365/notifications',
      headers: { 'content-type': 'application/json' },
      payload: { value: [{ subscriptionId: 'x', clientState: CLIENT_STATE, changeType: 'created' }] },
    });
    expect(taken.statusCode).toBe(202);
    const bad = await app.inject({
      method: 'POST',
      url: '/graph/m365/notifications',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    expect(bad.statusCode).toBe(400);
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.compile(op.responses['400'].content['application/json'].schema)(bad.json())).toBe(true);
    await app.close();
  });
});
