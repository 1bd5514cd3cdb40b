/** Intake and delivery wired to a real store (SQLite) and a real emulator over HTTP. */
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import { ConfigSchema, type RouteConfig } from '../../src/config/schema.js';
import {
  checkRoutes,
  createDeliverFn,
  createDelivery,
  targetOf,
  type DeliveryLoop,
  type DeliveryOptions,
} from '../../src/pipeline/delivery/index.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { RuntimeEvents } from '../../src/pipeline/events.js';
import { createIntake } from '../../src/pipeline/intake.js';
import { preview } from '../../src/preview/index.js';
import { openStore } from '../../src/store/index.js';
import type { OpenStoreOptions, Store } from '../../src/store/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { fileOrigin } from '../../adapters/files/identity.js';

const config = ConfigSchema.parse({ routes: [{ name: 'r', source: 'acme/pipe' }] });
const route = config.routes[0]!;
const msg = (i: number) =>
  Buffer.from(
    `From: A <a@x.com>\r\nTo: b@y.com\r\nSubject: s${i}\r\nMessage-ID: <p${i}@x.com>\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\n\r\nbody ${i}\r\n`,
  );

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** Resolves once the event loop went round: every promise continuation queued until now has run. */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

async function setup(options?: OpenStoreOptions): Promise<{ store: Store; emu: StartedEmulator }> {
  const emu = await startEmulator({ autoCreateSources: true });
  const store = await openStore('sqlite::memory:', options);
  cleanup.push(
    () => emu.stop(),
    () => store.close(),
  );
  const intake = intakeOf(store, 10_000);
  await intake.accept(
    Array.from({ length: 10 }, (_, i) => ({
      raw: msg(i),
      key: `files:/x.mbox:${i}`,
      origin: fileOrigin('/x.mbox', i),
      route: 'r',
      receivedAt: new Date(),
    })),
    { checkpoint: { key: 'files:/x.mbox', value: { index: 10 } } },
  );
  return { store, emu };
}

/** A delivery loop for `route` through `client`; `options` replace the defaults (one owner 'test', one worker, batches of 100). */
function deliveryOf(store: Store, client: ApiClient, options: Partial<DeliveryOptions> = {}): DeliveryLoop {
  return createDelivery({
    store,
    routes: [route],
    deliver: createDeliverFn({ client, ledger: store, config }),
    owner: 'test',
    leaseMs: 10_000,
    claimLimit: 100,
    concurrency: 1,
    maxItemAttempts: 3,
    ...options,
  });
}

function loop(store: Store, emu: StartedEmulator, token: string, events?: RuntimeEvents) {
  const client = createApiClient({ baseUrl: emu.url, token, retry: { maxAttempts: 1 } });
  return deliveryOf(store, client, { pauseMs: 60_000, ...(events ? { events } : {}) });
}

/** Intake for `route` into `store`, parsing in this thread, with room for `maxOutbox` items. */
function intakeOf(store: Store, maxOutbox: number, events?: RuntimeEvents) {
  return createIntake({
    store,
    routes: new Map([[route.name, route]]),
    parse: async (raw, o) => encodePreview(await preview(raw, o)),
    parsing: {},
    maxOutbox,
    ...(events ? { events } : {}),
  });
}

/** Events that wake `d` on each stored item, as the runtime wires intake to delivery. */
function wakes(d: { wake(): void }): RuntimeEvents {
  const events = new RuntimeEvents();
  events.on('item:stored', () => d.wake());
  return events;
}

describe('delivery', () => {
  it('delivers queued items and records them; a second pass sends nothing', async () => {
    const { store, emu } = await setup();
    const d = loop(store, emu, emu.token);
    await d.run(new AbortController().signal, async () => (await store.outboxDepth('r')) === 0);
    expect(d.counters).toMatchObject({ delivered: 10, aiUnits: 10 });
    expect(emu.emulator.stats()).toMatchObject({ comments: 10, ai_units: 10 });
    expect(await store.getCheckpoint('files:/x.mbox')).toEqual({ index: 10 });
  });

  it('pauses the route on 401 instead of spinning or dead-lettering', async () => {
    const { store, emu } = await setup();
    let claims = 0;
    const claim = store.claim.bind(store);
    store.claim = (...args) => ((claims += 1), claim(...args));
    let pauses = 0;
    let settled!: () => void;
    const batchDone = new Promise<void>((r) => (settled = r));
    const events = new RuntimeEvents();
    events.on('route:paused', () => void pauses++);
    events.on('delivery:batch', () => settled());
    const d = loop(store, emu, 'wrong-token', events);
    const controller = new AbortController();
    const running = d.run(controller.signal);
    await batchDone;
    // The refused items are due again at once: a worker that did not pause would claim them
    // before the event loop goes round; a paused one is in its 60 s wait.
    await turn();
    expect(claims).toBe(1);
    controller.abort();
    await running;
    expect(pauses).toBe(1);
    const requests = Object.values(emu.emulator.stats().requests['sync-raw-emails'] ?? {}).reduce((a, b) => a + b, 0);
    expect(requests).toBe(1);
    expect(await store.outboxDepth('r')).toBe(10);
    expect(await store.listDeadLetters({ limit: 10 })).toEqual([]);
  });

  it('reports a pause once while it lasts, its resume when it ran out, and a new pause with a new since-when', async () => {
    const { store, emu } = await setup();
    const client = createApiClient({ baseUrl: emu.url, token: 'wrong-token', retry: { maxAttempts: 1 } });
    const events = new RuntimeEvents();
    const seen: string[] = [];
    const since: number[] = [];
    let twice!: () => void;
    const pausedTwice = new Promise<void>((r) => (twice = r));
    events.on('route:paused', (e) => {
      seen.push(`paused ${e.code}`);
      since.push(e.since.getTime());
      if (since.length === 2) twice();
    });
    events.on('route:resumed', (e) => void seen.push(`resumed after ${e.pausedMs >= 50 ? 'the pause' : 'too soon'}`));
    const d = deliveryOf(store, client, { concurrency: 2, pauseMs: 50, events });
    const controller = new AbortController();
    const running = d.run(controller.signal);
    await pausedTwice;
    controller.abort();
    await running;
    expect(seen.slice(0, 3)).toEqual([
      'paused MAILGATE_ERR_API_UNAUTHORIZED',
      'resumed after the pause',
      'paused MAILGATE_ERR_API_UNAUTHORIZED',
    ]);
    expect(since[1]!).toBeGreaterThanOrEqual(since[0]! + 50);
  });

  it('claims new items as soon as it is woken, not at the end of its idle wait', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    const store = await openStore('sqlite::memory:');
    cleanup.push(
      () => emu.stop(),
      () => store.close(),
    );
    const client = createApiClient({ baseUrl: emu.url, token: emu.token, retry: { maxAttempts: 1 } });
    const d = deliveryOf(store, client, { concurrency: 2, idleMs: 600_000 });
    const controller = new AbortController();
    let emptyRounds = 0;
    let bothIdle!: () => void;
    const idling = new Promise<void>((r) => (bothIdle = r));
    // `until` is asked after each empty claim round, just before the worker's idle wait.
    const running = d.run(controller.signal, async () => {
      if ((emptyRounds += 1) === 2) bothIdle();
      return false;
    });
    await idling;
    await turn();
    // Both route workers found nothing and sleep for ten minutes now.
    expect(emptyRounds).toBe(2);
    const intake = intakeOf(store, 10_000, wakes(d));
    await intake.accept([{ raw: msg(1), key: 'files:/w.mbox:1', origin: fileOrigin('/w.mbox', 1), route: 'r', receivedAt: new Date() }]);
    while (emu.emulator.stats().comments < 1) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await running;
    expect(d.counters.delivered).toBe(1);
  });

  it('ends every worker of the run once one finds `until` true, without another claim or question', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    const real = await openStore('sqlite::memory:');
    cleanup.push(
      () => emu.stop(),
      () => real.close(),
    );
    let claims = 0;
    const store = Object.create(real) as Store;
    store.claim = (...args) => ((claims += 1), real.claim(...args));
    const client = createApiClient({ baseUrl: emu.url, token: emu.token, retry: { maxAttempts: 1 } });
    const d = deliveryOf(store, client, { concurrency: 3, idleMs: 600_000 });
    let asked = 0;
    // The first two workers to ask go to their (ten-minute) idle wait; the third ends the run.
    await d.run(new AbortController().signal, async () => (asked += 1) === 3);
    expect(asked).toBe(3);
    expect(claims).toBe(3);
  });

  for (const flushMs of [0, 1_000]) {
    it(`after a partial batch waits flush_ms (${flushMs}) before claiming again: mail arriving meanwhile shares one request`, async () => {
      const { store, emu } = await setup();
      const client = createApiClient({ baseUrl: emu.url, token: emu.token, retry: { maxAttempts: 1 } });
      let batches = 0;
      let firstDone!: () => void;
      const first = new Promise<void>((r) => (firstDone = r));
      const events = new RuntimeEvents();
      events.on('delivery:batch', () => void ((batches += 1) === 1 && firstDone()));
      const d = deliveryOf(store, client, { flushMs, events });
      const running = d.run(new AbortController().signal, async () => emu.emulator.stats().comments === 15);
      await first;
      // Five messages arrive one by one, each waking delivery as intake does.
      const intake = intakeOf(store, 10_000, wakes(d));
      for (let i = 10; i < 15; i++) {
        await intake.accept([
          {
            raw: msg(i),
            key: `files:/y.mbox:${i}`,
            origin: fileOrigin('/y.mbox', i),
            route: 'r',
            receivedAt: new Date(),
          },
        ]);
        await turn();
      }
      await running;
      const requests = Object.values(emu.emulator.stats().requests['sync-raw-emails'] ?? {}).reduce((a, b) => a + b, 0);
      expect(emu.emulator.stats().comments).toBe(15);
      // Without the wait each woken claim sends what it finds; with it the five share the second request.
      if (flushMs > 0) expect(requests).toBe(2);
      else expect(requests).toBeGreaterThan(2);
    });
  }

  it('drain ends a run at once: the partial batch waiting out flush_ms and the worker in its idle wait both stop waiting', async () => {
    // Without drain both waits last ten minutes: the run below would never end within the test's timeout.
    const { store, emu } = await setup();
    const client = createApiClient({ baseUrl: emu.url, token: emu.token, retry: { maxAttempts: 1 } });
    let delivered!: () => void;
    const firstBatch = new Promise<void>((r) => (delivered = r));
    const events = new RuntimeEvents();
    events.on('delivery:batch', () => delivered());
    const d = deliveryOf(store, client, { concurrency: 2, idleMs: 600_000, flushMs: 600_000, events });
    let emptyRounds = 0;
    const running = d.run(new AbortController().signal, async () => {
      emptyRounds += 1;
      return (await store.outboxDepth(route.name)) === 0;
    });
    await firstBatch;
    await turn();
    // One worker sent the ten messages (a partial batch) and waits out flush_ms; the other found nothing and idles.
    expect(emu.emulator.stats().comments).toBe(10);
    d.drain();
    await running;
    expect(d.counters.delivered).toBe(10);
    expect(emptyRounds).toBeGreaterThanOrEqual(2);
  });

  it('a pull call stored while a worker waits out flush_ms goes out at once (the last chunk of a backfill waited for mail that was not coming); a push call still waits', async () => {
    const { store, emu } = await setup();
    const client = createApiClient({ baseUrl: emu.url, token: emu.token, retry: { maxAttempts: 1 } });
    let batches = 0;
    const events = new RuntimeEvents();
    events.on('delivery:batch', () => void (batches += 1));
    const d = deliveryOf(store, client, { idleMs: 600_000, flushMs: 600_000, events });
    const controller = new AbortController();
    const running = d.run(controller.signal);
    // A pull call ends the flush wait (the runtime does so for one of 100 items or more: wake-delivery.ts); a push call only wakes idle workers.
    const wired = new RuntimeEvents();
    wired.on('item:stored', (e) => (e.via === 'pull' ? d.flush() : d.wake()));
    const intake = intakeOf(store, 10_000, wired);
    const inbound = (i: number) => ({
      raw: msg(i),
      key: `files:/z.mbox:${i}`,
      origin: fileOrigin('/z.mbox', i),
      route: 'r',
      receivedAt: new Date(),
    });
    try {
      while (batches < 1) await new Promise((r) => setTimeout(r, 10));
      // The worker sent the ten messages (a partial batch) and waits out flush_ms (ten minutes).
      await intake.accept([10, 11, 12].map(inbound), { whenFull: 'refuse' });
      await new Promise((r) => setTimeout(r, 300));
      expect(emu.emulator.stats().comments).toBe(10);
      await intake.accept([13, 14, 15, 16, 17].map(inbound));
      // The emulator holds the comments a moment before delivery reports its batch: wait for both.
      while (emu.emulator.stats().comments < 18 || batches < 2) await new Promise((r) => setTimeout(r, 10));
      expect(batches).toBe(2);
    } finally {
      controller.abort();
      await running;
    }
  });

  it('keeps its claim while a request outlasts the lease: a second gateway claims nothing, each message is sent once', async () => {
    // The store's clock moves only when told: each round moves it past the lease (300 ms),
    // which only the first gateway's renewals (every 100 ms of real time) keep alive.
    let now = Date.now();
    const { store, emu } = await setup({ now: () => now });
    let renewed: (() => void) | undefined;
    const renewClaims = store.renewClaims.bind(store);
    store.renewClaims = async (...args) => {
      const n = await renewClaims(...args);
      renewed?.();
      return n;
    };
    await emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', delay_ms: 2_000, times: 1 }]);
    const client = createApiClient({ baseUrl: emu.url, token: emu.token, retry: { maxAttempts: 1 } });
    const gateway = (owner: string) => deliveryOf(store, client, { owner, leaseMs: 300, idleMs: 20 });
    let inFlight = true;
    const slow = gateway('first')
      .runOnce(route)
      .finally(() => void (inFlight = false));
    /** Two renewals, so the second one surely started after the clock moved; fails if the request ends first. */
    const twoRenewals = async (): Promise<void> => {
      for (let i = 0; i < 2; i++) {
        const next = new Promise<void>((r) => (renewed = r));
        await Promise.race([next, slow.then(() => Promise.reject(new Error('the request ended before the claim was renewed')))]);
      }
    };
    await twoRenewals();
    const second = gateway('second');
    let stolen = 0;
    for (let round = 0; round < 3; round++) {
      now += 1_000;
      await twoRenewals();
      // Each renewal holds for a whole lease from when it was made.
      now += 299;
      expect(inFlight).toBe(true);
      stolen += await second.runOnce(route);
    }
    expect(await slow).toBe(10);
    expect(stolen).toBe(0);
    expect(emu.emulator.stats()).toMatchObject({ comments: 10, ai_units: 10 });
    const requests = Object.values(emu.emulator.stats().requests['sync-raw-emails'] ?? {}).reduce((a, b) => a + b, 0);
    expect(requests).toBe(1);
  });

  it('accepts an empty batch that only moves the checkpoint', async () => {
    const store = await openStore('sqlite::memory:');
    cleanup.push(() => store.close());
    const intake = intakeOf(store, 10);
    await intake.accept([], { checkpoint: { key: 'files:/empty', value: { index: 3 } } });
    expect(await intake.checkpoint('files:/empty')).toEqual({ index: 3 });
  });
});

describe('route mapping', () => {
  it('maps a predict route to a camelCase target and rejects colliding properties', () => {
    const c = ConfigSchema.parse({
      routes: [{ name: 'p', mode: 'predict', dataset: 'acme/ds', model_version: 3, threshold: 0.5, transform_tag: 'generic.0.CONVKER5' }],
    });
    expect(targetOf(c.routes[0]!, c)).toMatchObject({
      kind: 'predict',
      dataset: 'acme/ds',
      version: 3,
      threshold: 0.5,
      transformTag: 'generic.0.CONVKER5',
      maxDocuments: 4096,
    });
    const bad = { ...route, user_properties: { 'string:Sender': 'x' } } as RouteConfig;
    expect(() => checkRoutes([bad])).toThrow(/MAILGATE_ERR_CONFIG_INVALID|collides/);
  });
});

describe('retry delay of an item whose request failed', () => {
  it('is whole milliseconds the store accepts, growing per attempt, never below Retry-After', async () => {
    const { defaultRetryDelay } = await import('../../src/pipeline/delivery/index.js');
    for (let attempts = 0; attempts < 25; attempts++) {
      for (let k = 0; k < 50; k++) {
        const d = defaultRetryDelay(attempts, k % 2 === 0 ? undefined : 1_234.5);
        expect(Number.isInteger(d)).toBe(true);
        expect(d).toBeGreaterThanOrEqual(Math.min(150_000, 500 * 2 ** attempts));
        expect(d).toBeLessThanOrEqual(300_000);
        if (k % 2 === 1) expect(d).toBeGreaterThanOrEqual(1_235);
      }
    }
  });

  it('reschedules the items of a request that failed for good, releasing their claim at once', async () => {
    let now = Date.now();
    const store = await openStore('sqlite::memory:', { now: () => now });
    cleanup.push(() => store.close());
    const intake = intakeOf(store, 100);
    await intake.accept([{ raw: msg(1), key: 'files:/f.mbox:0', origin: fileOrigin('/f.mbox', 0), route: 'r', receivedAt: new Date() }]);
    const client = createApiClient({ baseUrl: 'http://127.0.0.1:9', token: 't', retry: { maxAttempts: 1 } });
    const errors: unknown[] = [];
    const d = deliveryOf(store, client, {
      owner: 'a',
      leaseMs: 60_000,
      claimLimit: 10,
      maxItemAttempts: 5,
      onError: (e) => errors.push(e),
    });
    expect(await d.runOnce(route)).toBe(1);
    expect(errors).toEqual([]);
    // Not due before the retry delay (at least 500 ms for a first attempt)...
    now += 499;
    expect(await store.claim('r', 10, 'b', 60_000)).toEqual([]);
    // ...and released: once due (at most 1 s), another owner claims it (the lease of 60 s is not what frees it).
    now += 501;
    expect((await store.claim('r', 10, 'b', 60_000)).map((i) => i.attempts)).toEqual([1]);
  });
});
