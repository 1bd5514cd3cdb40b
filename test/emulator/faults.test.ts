import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { parseFaultSpec, type FaultRule } from '../../src/emulator/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { client, mail, setup, SYNC, TAG, type Client } from './helpers.js';

let emu: StartedEmulator;
let api: Client;
let admin: Client;

beforeEach(async () => {
  emu = await startEmulator();
  api = client(emu.url, emu.token);
  admin = client(emu.url, undefined);
  await setup(api, { dataset: true });
});
afterEach(() => emu.stop());

const sync = (docs = [mail()]) => api.post(SYNC, { documents: docs, transform_tag: TAG });
const faults = (rules: FaultRule[]) => admin.post('/_emulator/faults', { rules });

/** Sends a request expecting the connection to be dropped; returns the fetch error. */
async function dropped(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => undefined,
    (e: Error) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return err!;
}

describe('status faults', () => {
  it('429 with Retry-After, not applied to state', async () => {
    await faults([{ endpoint: 'sync-raw-emails', status: 429, retry_after: 2, times: 1 }]);
    const r = await sync();
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('2');
    expect(r.json).toEqual({ status: 'error', message: '429 Too Many Requests' });
    expect(emu.emulator.stats()).toMatchObject({ comments: 0, ai_units: 0 });
    expect((await sync()).status).toBe(200);
  });

  it('a modelled quota answer: its status and message as configured, nothing applied', async () => {
    await faults(parseFaultSpec('sync-raw-emails:quotax1'));
    const r = await sync();
    expect(r.status).toBe(402);
    expect(r.json).toEqual({ status: 'error', message: 'CommentQuotaHit: the project has reached its comment quota' });
    await faults(parseFaultSpec('sync-raw-emails:quota:status=403:message=Quota exceeded for comments'));
    const other = await sync();
    expect(other.status).toBe(403);
    expect(other.json).toEqual({ status: 'error', message: 'Quota exceeded for comments' });
    expect(emu.emulator.stats()).toMatchObject({ comments: 0, ai_units: 0 });
  });

  it('an HTML error page as a proxy sends it', async () => {
    await faults([{ status: 502, html: true, times: 1 }]);
    const r = await sync();
    expect(r.status).toBe(502);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.text).toContain('<h1>502 Bad Gateway</h1>');
    expect(r.json).toBeUndefined();
  });

  it('a scripted sequence: 503, 409, 500 then success', async () => {
    emu.emulator.setFaults([
      { endpoint: 'sync-raw-emails', status: 503, times: 1 },
      { endpoint: 'sync-raw-emails', status: 409, times: 1 },
      { endpoint: 'sync-raw-emails', status: 500, times: 1 },
    ]);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await sync([mail({ commentId: 'aa' })])).status);
    expect(statuses).toEqual([503, 409, 500, 200]);
    expect(emu.emulator.stats().requests['sync-raw-emails']).toEqual({ '200': 1, '409': 1, '500': 1, '503': 1 });
    expect(emu.emulator.stats().ai_units).toBe(1);
  });

  it('faults target one endpoint; others pass', async () => {
    emu.emulator.setFaults([{ endpoint: 'predict-raw-emails', status: 500 }]);
    expect((await sync()).status).toBe(200);
    const r = await api.post('/api/v1/datasets/acme/triage/labellers/live/predict-raw-emails', { documents: [mail()], transform_tag: TAG });
    expect(r.status).toBe(500);
  });

  it('a fault comes before authentication, as a proxy would answer', async () => {
    emu.emulator.setFaults([{ status: 503, times: 1 }]);
    expect((await client(emu.url, 'wrong').get('/api/v1/sources')).status).toBe(503);
  });

  it('apply: the write happens, then the fault status is answered', async () => {
    emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', status: 504, apply: true, times: 1 }]);
    const doc = mail({ commentId: 'bb' });
    const r = await sync([doc]);
    expect(r.status).toBe(504);
    expect(emu.emulator.stats()).toMatchObject({ comments: 1, ai_units: 1 });
    const retry = await sync([doc]);
    expect(retry.json.unchanged).toBe(1);
    expect(emu.emulator.stats().ai_units).toBe(1);
  });
});

describe('rates', () => {
  it('rate with a seed is deterministic', async () => {
    const run = async (): Promise<number[]> => {
      emu.emulator.setFaults([{ status: 503, rate: 0.5, seed: 42 }]);
      const out: number[] = [];
      for (let i = 0; i < 20; i++) out.push((await api.get('/api/v1/sources')).status);
      return out;
    };
    const a = await run();
    const b = await run();
    expect(a).toEqual(b);
    expect(a).toContain(503);
    expect(a).toContain(200);
  });

  it('rate 0 never fires, rate 1 always does', async () => {
    emu.emulator.setFaults([
      { status: 500, rate: 0 },
      { status: 429, rate: 1 },
    ]);
    expect((await api.get('/api/v1/sources')).status).toBe(429);
  });
});

describe('slow responses', () => {
  it('a delay-only rule processes the request normally afterwards', async () => {
    emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', delay_ms: 50, times: 1 }]);
    const r = await sync([mail({ commentId: 'cc' })]);
    expect(r.status).toBe(200);
    expect(r.json.new).toBe(1);
  });

  it('a delay with a status answers the status after the delay', async () => {
    emu.emulator.setFaults([{ delay_ms: 20, status: 503, times: 1 }]);
    expect((await sync()).status).toBe(503);
    expect(emu.emulator.stats().comments).toBe(0);
  });

  it('a client deadline shorter than the delay sees a timeout', async () => {
    emu.emulator.setFaults([{ endpoint: 'sources', delay_ms: 2_000, times: 1 }]);
    const err = await dropped(
      fetch(`${emu.url}/api/v1/sources`, { headers: { authorization: `Bearer ${emu.token}` }, signal: AbortSignal.timeout(100) }),
    );
    expect(err.name).toBe('TimeoutError');
  });
});

describe('dropped connections', () => {
  it('drop: the socket closes without an answer and nothing is applied', async () => {
    emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', drop: true, times: 1 }]);
    await dropped(sync([mail({ commentId: 'dd' })]));
    expect(emu.emulator.stats()).toMatchObject({ comments: 0, ai_units: 0 });
    expect(emu.emulator.stats().requests['sync-raw-emails']).toEqual({ dropped: 1 });
    expect((await sync([mail({ commentId: 'dd' })])).json.new).toBe(1);
  });

  it('drop_after_apply: the write happened and was billed, the client never saw the answer', async () => {
    emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', drop_after_apply: true, times: 1 }]);
    const doc = mail({ commentId: 'ee' });
    await dropped(sync([doc]));
    expect(emu.emulator.stats()).toMatchObject({ comments: 1, ai_units: 1 });
    const retry = await sync([doc]);
    expect(retry.json).toMatchObject({ new: 0, unchanged: 1 });
    expect(emu.emulator.stats().ai_units).toBe(1);
  });
});

describe('answers cut mid-body', () => {
  const post = (doc: ReturnType<typeof mail>, signal?: AbortSignal) =>
    fetch(emu.url + SYNC, {
      method: 'POST',
      headers: { authorization: `Bearer ${emu.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ documents: [doc], transform_tag: TAG }),
      ...(signal === undefined ? {} : { signal }),
    });

  it('truncate: the write happened; status and headers arrive, the body is cut and the socket closed', async () => {
    emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', truncate: true, times: 1 }]);
    const doc = mail({ commentId: 'ff' });
    const res = await post(doc);
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(0);
    await dropped(res.text());
    expect(emu.emulator.stats()).toMatchObject({ comments: 1, ai_units: 1 });
    expect(emu.emulator.stats().requests['sync-raw-emails']).toEqual({ truncated: 1 });
    expect((await sync([doc])).json).toMatchObject({ new: 0, unchanged: 1 });
  });

  it('truncate with stall_ms: the half body, then silence until the client gives up', async () => {
    emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', truncate: true, stall_ms: 60_000, times: 1 }]);
    const res = await post(mail(), AbortSignal.timeout(500));
    expect(res.status).toBe(200);
    const err = await dropped(res.text());
    expect(err.name).toBe('TimeoutError');
  });
});

describe('admin fault endpoints', () => {
  it('POST replaces the plan, GET shows what remains, DELETE clears it', async () => {
    expect((await faults([{ status: 500, times: 2 }])).json.rules).toEqual([{ status: 500, times: 2 }]);
    await api.get('/api/v1/sources');
    expect((await admin.get('/_emulator/faults')).json.rules).toEqual([{ status: 500, times: 1 }]);
    await faults([{ status: 429 }]);
    expect((await api.get('/api/v1/sources')).status).toBe(429);
    await admin.del('/_emulator/faults');
    expect((await api.get('/api/v1/sources')).status).toBe(200);
  });

  it('an invalid plan is 400 and the old plan stays', async () => {
    await faults([{ status: 429, times: 1 }]);
    const r = await faults([{ status: 200 }]);
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/status/);
    expect((await api.get('/api/v1/sources')).status).toBe(429);
  });

  it('reset forgets state, counters and faults', async () => {
    await sync();
    emu.emulator.setFaults([{ status: 500, endpoint: 'datasets' }]);
    expect((await admin.post('/_emulator/reset', {})).json).toEqual({ status: 'ok' });
    expect(emu.emulator.stats()).toEqual({ requests: {}, ai_units: 0, comments: 0 });
    expect((await admin.get('/_emulator/faults')).json.rules).toEqual([]);
    expect((await api.get('/api/v1/sources/acme/inbox')).status).toBe(404);
  });
});

describe('stats', () => {
  it('counts requests per endpoint and status', async () => {
    await sync();
    await api.post(SYNC, { documents: [] });
    await api.get('/api/v1/sources/acme/inbox');
    await api.get('/api/v1/sources/acme/inbox/threads?id=ab');
    await api.get('/api/v1/sources/acme/inbox/comments/ab');
    const stats = (await admin.get('/_emulator/stats')).json;
    expect(stats.requests['sync-raw-emails']).toEqual({ '200': 1, '422': 1 });
    expect(stats.requests.sources).toEqual({ '200': 2 });
    expect(stats.requests.datasets).toEqual({ '200': 1 });
    expect(stats.requests.threads).toEqual({ '200': 1 });
    expect(stats.requests.comments).toEqual({ '404': 1 });
    expect(stats).toMatchObject({ ai_units: 1, comments: 1 });
    expect(stats).toEqual(emu.emulator.stats());
  });
});

describe('parseFaultSpec', () => {
  it('parses statuses, counts, rates and options', () => {
    expect(parseFaultSpec('sync-raw-emails:429x3:retry_after=1,*:503@0.1:seed=7')).toEqual([
      { endpoint: 'sync-raw-emails', status: 429, times: 3, retry_after: 1 },
      { status: 503, rate: 0.1, seed: 7 },
    ]);
  });

  it('parses drops, delays, html and apply', () => {
    expect(
      parseFaultSpec(
        'sync-raw-emails:drop_after_applyx1, predict-raw-emails:dropx2 ,*:delay1500,*:502:html:times=4,sync-raw-emails:504:apply',
      ),
    ).toEqual([
      { endpoint: 'sync-raw-emails', drop_after_apply: true, times: 1 },
      { endpoint: 'predict-raw-emails', drop: true, times: 2 },
      { delay_ms: 1500 },
      { status: 502, html: true, times: 4 },
      { endpoint: 'sync-raw-emails', status: 504, apply: true },
    ]);
  });

  it('parses truncate with stall_ms', () => {
    expect(parseFaultSpec('sync-raw-emails:truncatex2,predict-raw-emails:truncate:stall_ms=5000')).toEqual([
      { endpoint: 'sync-raw-emails', truncate: true, times: 2 },
      { endpoint: 'predict-raw-emails', truncate: true, stall_ms: 5000 },
    ]);
  });

  it('an empty spec is no faults', () => {
    expect(parseFaultSpec('  ')).toEqual([]);
  });

  for (const bad of [
    'sync-raw-emails',
    'nowhere:500',
    '*:200',
    '*:500x2@0.5',
    '*:teapot',
    '*:500:retry_after=soon',
    '*:drop:html',
    '*:500@1.5',
    '*:500:colour=red',
    '*:500:stall_ms=5',
    '*:truncate:apply',
    '*:drop:stall_ms=1',
  ]) {
    it(`refuses "${bad}" with a coded error`, () => {
      let caught: unknown;
      try {
        parseFaultSpec(bad);
      } catch (err) {
        caught = err;
      }
      expect(isGatewayError(caught, 'MAILGATE_ERR_EMULATOR_FAULT_INVALID')).toBe(true);
    });
  }

  it('a parsed spec drives the emulator', async () => {
    emu.emulator.setFaults(parseFaultSpec('sources:429x1:retry_after=1'));
    const r = await api.get('/api/v1/sources');
    expect([r.status, r.headers.get('retry-after')]).toEqual([429, '1']);
  });
});
