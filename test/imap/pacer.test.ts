import { describe, expect, it } from 'vitest';
import { ConnectionPacer, checkPacing, type Release } from '../../src/pipeline/pacer.js';
import { manualClock } from './manual-clock.js';

const settle = () => new Promise((r) => setImmediate(r));

/** Starts `n` acquisitions; `granted` lists the releases in grant order. */
function contenders(pacer: ConnectionPacer, n: number, signal?: AbortSignal) {
  const granted: Release[] = [];
  const outcomes = Array.from({ length: n }, (_, i) =>
    pacer.acquire(signal).then(
      (r) => (granted.push(r), i),
      () => -1,
    ),
  );
  return { granted, outcomes };
}

describe('ConnectionPacer (injected clock)', () => {
  it('never has more than `concurrency` attempts in flight', async () => {
    const clock = manualClock();
    const pacer = new ConnectionPacer({ concurrency: 3, perSecond: 1000 }, clock);
    const { granted } = contenders(pacer, 10);
    await settle();
    expect(granted).toHaveLength(3);
    clock.advance(10_000);
    await settle();
    expect(granted).toHaveLength(3);
    expect(pacer.waiting).toBe(7);
    granted[0]!();
    granted[0]!(); // a second release of the same permit changes nothing
    await settle();
    expect(granted).toHaveLength(4);
    expect(pacer.inFlight).toBe(3);
    for (let i = 1; i < 10; i++) {
      granted[i]!();
      clock.advance(10);
      await settle();
    }
    expect(granted).toHaveLength(10);
    expect(pacer.peakInFlight).toBe(3);
  });

  it('starts at most `perSecond` attempts a second after the initial burst, however fast they end', async () => {
    const clock = manualClock();
    const pacer = new ConnectionPacer({ concurrency: 5, perSecond: 10 }, clock);
    const { granted } = contenders(pacer, 60);
    const releaseAll = async () => {
      for (const r of granted) r();
      await settle();
    };
    await settle();
    expect(granted).toHaveLength(5); // the burst
    await releaseAll();
    expect(granted).toHaveLength(5); // the bucket is empty: releases do not start more
    clock.advance(1000);
    await settle();
    expect(granted).toHaveLength(10); // one bucket's worth: capped at the burst, refilled at 10/s
    await releaseAll();
    let total = granted.length;
    for (let s = 0; s < 4; s++) {
      for (let t = 0; t < 10; t++) {
        clock.advance(100);
        await settle();
        await releaseAll();
      }
      expect(granted.length - total).toBe(10);
      total = granted.length;
    }
    expect(pacer.grants).toBe(total);
  });

  it('keeps one timer for the whole queue', async () => {
    const clock = manualClock();
    const pacer = new ConnectionPacer({ concurrency: 2, perSecond: 1 }, clock);
    const { granted } = contenders(pacer, 50);
    await settle();
    for (const r of granted) r();
    await settle();
    expect(clock.pending()).toBe(1);
  });

  it('serves waiters in arrival order', async () => {
    const clock = manualClock();
    const pacer = new ConnectionPacer({ concurrency: 1, perSecond: 1000 }, clock);
    const order: number[] = [];
    const all = [0, 1, 2, 3].map((i) => pacer.acquire().then((r) => (order.push(i), r)));
    for (let i = 0; i < 4; i++) {
      clock.advance(10);
      await settle();
      (await all[i]!)();
    }
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it('an aborted waiter leaves the queue without a permit; an aborted signal is refused at once', async () => {
    const clock = manualClock();
    const pacer = new ConnectionPacer({ concurrency: 1, perSecond: 1000 }, clock);
    const first = await pacer.acquire();
    const stop = new AbortController();
    const { outcomes } = contenders(pacer, 3, stop.signal);
    await settle();
    expect(pacer.waiting).toBe(3);
    stop.abort();
    expect(await Promise.all(outcomes)).toEqual([-1, -1, -1]);
    expect(pacer.waiting).toBe(0);
    await expect(pacer.acquire(stop.signal)).rejects.toBeDefined();
    first();
    expect(pacer.inFlight).toBe(0);
    clock.advance(10);
    const next = await pacer.acquire();
    expect(pacer.inFlight).toBe(1);
    next();
  });

  it('validates its limits', () => {
    expect(() => checkPacing({ concurrency: 0, perSecond: 1 })).toThrow(/concurrency/);
    expect(() => checkPacing({ concurrency: 1.5, perSecond: 1 })).toThrow(/concurrency/);
    expect(() => checkPacing({ concurrency: 1, perSecond: 0 })).toThrow(/per second/);
    expect(() => checkPacing({ concurrency: 1, perSecond: Infinity })).toThrow(/per second/);
    expect(checkPacing({ concurrency: 4, perSecond: 0.5 })).toEqual({ concurrency: 4, perSecond: 0.5 });
  });
});
