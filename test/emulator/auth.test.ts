import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { client, mail, setup, SYNC, TAG, type Client } from './helpers.js';

let emu: StartedEmulator;
let api: Client;

beforeAll(async () => {
  emu = await startEmulator();
  api = client(emu.url, emu.token);
  await setup(api, { dataset: true });
});
afterAll(() => emu.stop());

const ROUTES: [string, string, unknown?][] = [
  ['GET', '/api/v1/sources'],
  ['GET', '/api/v1/sources/acme/inbox'],
  ['PUT', '/api/v1/sources/acme/other', { source: {} }],
  ['POST', SYNC, { documents: [mail()], transform_tag: TAG }],
  ['POST', '/api/v1/datasets/acme/triage/labellers/live/predict-raw-emails', { documents: [mail()], transform_tag: TAG }],
  ['GET', '/api/v1/sources/acme/inbox/comments/abcd'],
  ['DELETE', '/api/v1/sources/acme/inbox/comments?id=abcd'],
  ['GET', '/api/v1/sources/acme/inbox/threads?id=abcd'],
  ['GET', '/api/v1/datasets/acme/triage'],
  ['GET', '/api/v1/no-such-route'],
];

describe('bearer authentication', () => {
  for (const [method, path, body] of ROUTES) {
    it(`${method} ${path} without a token is 401 with the error envelope`, async () => {
      const res = await client(emu.url, undefined).request(method, path, body);
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ status: 'error', message: '401 Unauthorized' });
    });
  }

  it('a wrong token is 401 and changes nothing', async () => {
    const res = await client(emu.url, 'wrong').post(SYNC, { documents: [mail()], transform_tag: TAG });
    expect(res.status).toBe(401);
    expect(emu.emulator.stats().comments).toBe(0);
  });

  it('a token without the Bearer scheme is 401', async () => {
    const res = await client(emu.url, undefined).request('GET', '/api/v1/sources', undefined, { authorization: emu.token });
    expect(res.status).toBe(401);
  });

  it('accepts any of several tokens', async () => {
    const multi = await startEmulator({ token: 'one' });
    try {
      const ok = await client(multi.url, 'one').get('/api/v1/sources');
      expect(ok.status).toBe(200);
      expect(ok.json).toEqual({ status: 'ok', sources: [] });
    } finally {
      await multi.stop();
    }
  });
});

describe('envelope and headers', () => {
  it('answers carry Server-Timing total;dur=<ms>', async () => {
    const res = await api.get('/api/v1/sources');
    expect(res.headers.get('server-timing')).toMatch(/^total;dur=\d+(\.\d+)?$/);
  });

  it('status is ok exactly when the HTTP code is 2xx', async () => {
    const answers = await Promise.all([
      api.get('/api/v1/sources/acme/inbox'),
      api.get('/api/v1/sources/acme/missing'),
      api.post(SYNC, { documents: [] }),
      api.request('POST', SYNC, undefined, { 'content-type': 'application/json' }),
    ]);
    for (const a of answers) {
      expect(a.json.status).toBe(a.status < 300 ? 'ok' : 'error');
      if (a.status >= 300) expect(typeof a.json.message).toBe('string');
    }
  });

  it('a body that is not JSON is a 400 with the envelope', async () => {
    const res = await fetch(emu.url + SYNC, {
      method: 'POST',
      headers: { authorization: `Bearer ${emu.token}`, 'content-type': 'application/json' },
      body: '{"documents": [',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 'error' });
  });
});

describe('unknown resources are 404', () => {
  const cases: [string, string, unknown?][] = [
    ['GET', '/api/v1/sources/acme/missing'],
    ['GET', '/api/v1/sources/id:0123456789abcdef'],
    ['POST', '/api/v1/sources/acme/missing/sync-raw-emails', { documents: [mail()], transform_tag: TAG }],
    ['GET', '/api/v1/datasets/acme/missing'],
    ['POST', '/api/v1/datasets/acme/missing/labellers/1/predict-raw-emails', { documents: [mail()], transform_tag: TAG }],
    ['POST', '/api/v1/datasets/acme/triage/labellers/3/predict-raw-emails', { documents: [mail()], transform_tag: TAG }],
    ['POST', '/api/v1/datasets/acme/triage/labellers/latest/predict-raw-emails', { documents: [mail()], transform_tag: TAG }],
    ['GET', '/api/v1/sources/acme/inbox/comments/abcdef'],
    ['GET', '/api/v1/sources/acme/missing/threads?id=ab'],
    ['GET', '/api/v1/nothing-here'],
  ];
  for (const [method, path, body] of cases) {
    it(`${method} ${path}`, async () => {
      const res = await api.request(method, path, body);
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ status: 'error', message: '404 Not Found' });
    });
  }
});

describe('a known path asked with another method is 405', () => {
  const cases: Array<[string, string, string]> = [
    ['GET', '/api/v1/sources/acme/inbox/sync-raw-emails', 'POST'],
    ['DELETE', '/api/v1/sources/acme/inbox/comments/abc', 'GET'],
    ['PATCH', '/api/v1/sources/acme/inbox', 'PUT, POST, GET'],
    ['GET', '/api/v1/datasets/acme/triage/labellers/live/predict-raw-emails', 'POST'],
  ];
  for (const [method, path, allow] of cases) {
    it(`${method} ${path}`, async () => {
      const res = await api.request(method, path);
      expect(res.status).toBe(405);
      expect(res.json).toEqual({ status: 'error', message: '405 Method Not Allowed' });
      expect(res.headers.get('allow')?.split(', ').sort()).toEqual(allow.split(', ').sort());
    });
  }
});

describe('admin endpoints', () => {
  it('need no token and are not counted', async () => {
    const anon = client(emu.url, undefined);
    const before = (await anon.get('/_emulator/stats')).json;
    const again = await anon.get('/_emulator/stats');
    expect(again.status).toBe(200);
    expect(again.json.requests).toEqual(before.requests);
  });
});
