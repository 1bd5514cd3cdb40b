/**
 * The per-user quota held by a mailbox (quota.ts), on a driven clock: both of Google's limits —
 * units per second as a moving average and units per minute — never exceeded in any window,
 * a spend counted from its answer's time, and a rate-limit pause holding every request.
 */
import { describe, expect, it } from 'vitest';
import { QuotaBucket } from '../../adapters/gmail/quota.js';

function clock() {
  let t = 1_000_000;
  return {
    now: () => t,
    sleep: async (ms: number) => {
      t += Math.max(1, ms);
    },
    advance: (ms: number) => (t += ms),
  };
}

/** The most units in any window of `ms` ending at a spend. */
function maxInWindow(spends: Array<[number, number]>, ms: number): number {
  return Math.max(...spends.map(([t]) => spends.filter(([u]) => u > t - ms && u <= t).reduce((a, [, n]) => a + n, 0)));
}

describe('gmail quota bucket', () => {
  it('holds units per second and units per minute in every sliding window', async () => {
    const c = clock();
    const q = new QuotaBucket({ perSecond: 250, perMinute: 1_000, clock: c });
    const spends: Array<[number, number]> = [];
    const signal = new AbortController().signal;
    for (let i = 0; i < 60; i++) {
      const answered = await q.take(50, signal);
      spends.push([c.now(), 50]);
      answered();
    }
    expect(maxInWindow(spends, 1000)).toBe(250);
    expect(maxInWindow(spends, 60_000)).toBe(1_000);
    // 3,000 units at 1,000 a minute: more than two minutes.
    expect(spends[59]![0] - spends[0]![0]).toBeGreaterThan(120_000);
  });

  it('counts a spend from its answer: a slow request pushes the next window back', async () => {
    const c = clock();
    const q = new QuotaBucket({ perSecond: 250, perMinute: 15_000, clock: c });
    const signal = new AbortController().signal;
    const answered = await q.take(250, signal);
    const sent = c.now();
    c.advance(700);
    answered();
    await q.take(5, signal);
    expect(c.now() - sent).toBeGreaterThan(1700);
  });

  it('a pause holds every request until it ends', async () => {
    const c = clock();
    const q = new QuotaBucket({ perSecond: 250, perMinute: 15_000, clock: c });
    const start = c.now();
    q.pause(start + 5_000);
    await q.take(5, new AbortController().signal);
    expect(c.now()).toBeGreaterThanOrEqual(start + 5_000);
    expect(q.fits(5)).toBe(50);
  });
});
