/**
 * Intake with several batches in flight (an adapter reading ahead): parsing overlaps, but
 * batches reach the store one at a time in call order, and a checkpoint is never written
 * ahead of an earlier batch that is not durable.
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigSchema } from '../../src/config/schema.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { createIntake, type ParseFn } from '../../src/pipeline/intake.js';
import type { Checkpoint, Inbound } from '../../src/pipeline/types.js';
import { preview } from '../../src/preview/index.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { fileOrigin } from '../../adapters/files/identity.js';

const config = ConfigSchema.parse({ routes: [{ name: 'r', source: 'acme/order' }] });
const routes = new Map([['r', config.routes[0]!]]);
const raw = (i: number) => Buffer.from(`From: a@x.com\r\nSubject: s${i}\r\nMessage-ID: <o${i}@x.com>\r\n\r\nbody ${i}\r\n`);
const batch = (from: number, n: number): Inbound[] =>
  Array.from({ length: n }, (_, k) => ({
    raw: raw(from + k),
    key: `files:/o.mbox:${from + k}`,
    origin: fileOrigin('/o.mbox', from + k),
    route: 'r',
    receivedAt: new Date(),
  }));
const checkpoint = (index: number): Checkpoint => ({ key: 'files:/o.mbox', value: { index } });

let store: Store;
afterEach(async () => store?.close());

/** A real store that records the checkpoint of each enqueue, and can be told to fail one. */
async function recordingStore(failAt?: number): Promise<{ store: Store; order: unknown[] }> {
  const real = await openStore('sqlite::memory:');
  const order: unknown[] = [];
  const wrapped = Object.create(real) as Store;
  wrapped.enqueue = async (items, cp) => {
    if (cp?.value.index === failAt) throw new Error('disk full');
    order.push(cp?.value.index);
    return real.enqueue(items, cp);
  };
  wrapped.close = () => real.close();
  return { store: wrapped, order };
}

/** Parses in this thread; messages of the first batch (index < 10) take 60 ms longer. */
const slowFirst: ParseFn = async (bytes, o) => {
  const result = encodePreview(await preview(bytes, o));
  if (/Subject: s[0-9]\r\n/.test(bytes.toString())) await new Promise((r) => setTimeout(r, 60));
  return result;
};

describe('intake with batches in flight', () => {
  it('stores batches in call order even when a later one parses first', async () => {
    const rec = await recordingStore();
    store = rec.store;
    const intake = createIntake({ store, routes, parse: slowFirst, parsing: {}, maxOutbox: 10_000 });
    await Promise.all([
      intake.accept(batch(0, 10), { checkpoint: checkpoint(10) }),
      intake.accept(batch(10, 10), { checkpoint: checkpoint(20) }),
      intake.accept(batch(20, 5), { checkpoint: checkpoint(25) }),
    ]);
    expect(rec.order).toEqual([10, 20, 25]);
    expect(await store.getCheckpoint('files:/o.mbox')).toEqual({ index: 25 });
    const items = await store.claim('r', 100, 'w', 60_000);
    expect(items.map((i) => i.origin.details['index'])).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('fails the batches behind a batch that failed, leaving the checkpoint before it', async () => {
    const rec = await recordingStore(10);
    store = rec.store;
    const intake = createIntake({ store, routes, parse: slowFirst, parsing: {}, maxOutbox: 10_000 });
    const first = intake.accept(batch(0, 10), { checkpoint: checkpoint(10) });
    const second = intake.accept(batch(10, 10), { checkpoint: checkpoint(20) });
    await expect(first).rejects.toThrow('disk full');
    await expect(second).rejects.toThrow('disk full');
    expect(rec.order).toEqual([]);
    expect(await store.getCheckpoint('files:/o.mbox')).toBeUndefined();
    // The adapter starts again from its checkpoint: a new accept is not held back by the failure.
    await intake.accept(batch(20, 5), { checkpoint: checkpoint(25) });
    expect(rec.order).toEqual([25]);
  });
});

describe('intake commits of pull calls', () => {
  afterEach(() => vi.useRealTimers());

  it("does not hold a pull call's commit for the next call's parse, which cannot join it (regression: it waited up to 2 ms each)", async () => {
    const rec = await recordingStore();
    store = rec.store;
    // The second call's parse is held until the first call is stored.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const parse: ParseFn = async (bytes, o) => {
      const result = encodePreview(await preview(bytes, o));
      if (/Subject: s1[0-9]\r\n/.test(bytes.toString())) await held;
      return result;
    };
    // Timers stand still: a commit that waited for the parse in flight would never start.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const intake = createIntake({ store, routes, parse, parsing: {}, maxOutbox: 10_000 });
    const first = intake.accept(batch(0, 5), { checkpoint: checkpoint(5) });
    const second = intake.accept(batch(10, 5), { checkpoint: checkpoint(15) });
    for (let turn = 0; turn < 1_000 && rec.order.length === 0; turn++) await new Promise((r) => setImmediate(r));
    expect(rec.order).toEqual([5]);
    await first;
    release();
    await second;
    expect(rec.order).toEqual([5, 15]);
  });
});

describe('intake backpressure', () => {
  const two = ConfigSchema.parse({
    routes: [
      { name: 'r', source: 'acme/order' },
      { name: 'other', source: 'acme/other' },
    ],
  });
  const both = new Map(two.routes.map((r) => [r.name, r]));
  const parse: ParseFn = async (bytes, o) => encodePreview(await preview(bytes, o));

  it("waits while its route's outbox is full, goes on once delivery made room, and never waits for another route", async () => {
    store = await openStore('sqlite::memory:');
    const intake = createIntake({ store, routes: both, parse, parsing: {}, maxOutbox: 5, backpressurePollMs: 10 });
    await intake.accept(batch(0, 5));
    expect(await store.outboxDepth('r')).toBe(5);
    // Another route's items are not held back by r's full outbox.
    await intake.accept(batch(100, 3).map((m) => ({ ...m, route: 'other' })));
    expect(await store.outboxDepth('other')).toBe(3);
    // Counts r's depth checks: a second check after the batch arrived means intake found the
    // outbox full, waited its poll interval and found it full again.
    let checks = 0;
    let checkedTwice!: () => void;
    const waiting = new Promise<void>((r) => (checkedTwice = r));
    const depth = store.outboxDepth.bind(store);
    store.outboxDepth = async (name) => {
      const n = await depth(name);
      if (name === 'r' && (checks += 1) === 2) checkedTwice();
      return n;
    };
    let admitted = false;
    const next = intake.accept(batch(5, 2)).then(() => void (admitted = true));
    await Promise.race([waiting, next]);
    expect(admitted).toBe(false);
    expect(await store.outboxDepth('r')).toBe(5);
    expect(intake.counters.received).toBe(8);
    const claimed = await store.claim('r', 10, 'w', 60_000);
    await store.markDelivered(
      claimed.map((c) => c.id),
      { outcome: 'delivered' },
    );
    await next;
    expect(admitted).toBe(true);
    expect(await store.outboxDepth('r')).toBe(2);
  });
});

describe('intake backpressure with calls in flight', () => {
  it('counts the calls let through and not stored yet: eight read-ahead calls pass the limit by at most one call', async () => {
    store = await openStore('sqlite::memory:');
    const intake = createIntake({ store, routes, parse: slowFirst, parsing: {}, maxOutbox: 10, backpressurePollMs: 10 });
    // A reader with eight calls of five messages in flight at once (IMAP reading ahead).
    const calls = Array.from({ length: 8 }, (_, i) => intake.accept(batch(100 + i * 5, 5)));
    let settled = 0;
    calls.forEach((c) => void c.then(() => (settled += 1)));
    // Until delivery makes room, the outbox stops at the limit (each call counted the ones ahead of it).
    await new Promise((r) => setTimeout(r, 300));
    expect(await store.outboxDepth('r')).toBeLessThanOrEqual(10 + 5);
    expect(settled).toBeLessThan(8);
    // Delivery drains; every call is stored in the end.
    while (settled < 8) {
      const claimed = await store.claim('r', 100, 'w', 60_000);
      await store.markDelivered(
        claimed.map((c) => c.id),
        { outcome: 'delivered' },
      );
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(intake.counters.received).toBe(40);
  });
});

describe('intake backpressure in call order', () => {
  it('never lets a later call take the room an earlier call waits for (the later one is stored after it: both would wait for ever)', async () => {
    const two = ConfigSchema.parse({
      routes: [
        { name: 'r', source: 'acme/order' },
        { name: 'other', source: 'acme/other' },
      ],
    });
    const both = new Map(two.routes.map((r) => [r.name, r]));
    store = await openStore('sqlite::memory:');
    const intake = createIntake({ store, routes: both, parse: slowFirst, parsing: {}, maxOutbox: 5, backpressurePollMs: 10 });
    await intake.accept(batch(200, 5).map((m) => ({ ...m, route: 'other' })));
    // The earlier call waits for room on `other`; the later one has room on `r` at once.
    let settled = 0;
    const earlier = intake.accept([...batch(300, 1), ...batch(301, 1).map((m) => ({ ...m, route: 'other' }))]);
    const later = intake.accept(batch(400, 5));
    for (const c of [earlier, later]) void c.then(() => (settled += 1));
    await new Promise((r) => setTimeout(r, 100));
    for (let i = 0; i < 100 && settled < 2; i++) {
      for (const route of ['r', 'other']) {
        const claimed = await store.claim(route, 100, 'w', 60_000);
        await store.markDelivered(
          claimed.map((c) => c.id),
          { outcome: 'delivered' },
        );
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(settled).toBe(2);
  });
});

describe('intake backpressure with many callers', () => {
  it('adds one listener to the shared signal however many callers wait for room, and wakes them all on abort', async () => {
    const real = await openStore('sqlite::memory:');
    store = Object.create(real) as Store;
    store.outboxDepth = async () => 5; // always full: every caller waits
    store.close = () => real.close();
    const stop = new AbortController();
    const intake = createIntake({
      store,
      routes,
      parse: slowFirst,
      parsing: {},
      maxOutbox: 5,
      backpressurePollMs: 20,
      signal: stop.signal,
    });
    const before = EventEmitter.getEventListeners(stop.signal, 'abort').length;
    const waiting = Array.from({ length: 30 }, (_, i) => intake.accept(batch(100 + i, 1)).then(() => i));
    await new Promise((r) => setTimeout(r, 100));
    expect(EventEmitter.getEventListeners(stop.signal, 'abort').length).toBe(before);
    expect(before).toBeLessThanOrEqual(1);
    stop.abort();
    expect((await Promise.all(waiting)).length).toBe(30);
  });
});

describe('intake key lookups of a pull call (the double key lookup)', () => {
  it('looks its keys up once, before parsing; a message stored by another writer meanwhile is still answered as a duplicate and stored once', async () => {
    const real = await openStore('sqlite::memory:');
    store = Object.create(real) as Store;
    store.close = () => real.close();
    let lookups = 0;
    store.findKeys = (route, keys) => {
      lookups += 1;
      return real.findKeys(route, keys);
    };
    // Another writer stores message 3 while this call's messages are being parsed (after the lookup).
    const plain: ParseFn = async (bytes, o) => encodePreview(await preview(bytes, o));
    const other = createIntake({ store: real, routes, parse: plain, parsing: {}, maxOutbox: 10_000 });
    let raced: Promise<unknown> | undefined;
    const parse: ParseFn = async (bytes, o) => {
      await (raced ??= other.accept(batch(3, 1)));
      return plain(bytes, o);
    };
    const intake = createIntake({ store, routes, parse, parsing: {}, maxOutbox: 10_000 });
    const results = await intake.accept(batch(0, 5), { checkpoint: checkpoint(5) });
    expect(lookups).toBe(1);
    expect(results.map((r) => r.duplicate)).toEqual([false, false, false, true, false]);
    expect(await store.outboxDepth('r')).toBe(5);
    expect(await store.getCheckpoint('files:/o.mbox')).toEqual({ index: 5 });
  });
});
