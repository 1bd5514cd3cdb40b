import { describe, expect, it } from 'vitest';
import { atLeast, backoffDelay, type Backoff } from '../../src/retry.js';

const equal: Backoff = { baseMs: 1_000, capMs: 8_000, jitter: 'equal' };
const spread: Backoff = { baseMs: 1_000, capMs: 8_000, jitter: { spread: 0.5 } };

describe('backoffDelay (exponential, capped, jittered; random injected)', () => {
  it('equal jitter spans [d/2, d): half fixed, half random', () => {
    expect(backoffDelay(0, equal, () => 0)).toBe(500);
    expect(backoffDelay(0, equal, () => 0.5)).toBe(750);
    expect(backoffDelay(2, equal, () => 0)).toBe(2_000);
    expect(backoffDelay(2, equal, () => 1)).toBe(4_000);
  });

  it('full jitter spans [0, d): a herd failing at one instant spreads over the whole wait', () => {
    const full: Backoff = { ...equal, jitter: 'full' };
    expect(backoffDelay(0, full, () => 0)).toBe(0);
    expect(backoffDelay(0, full, () => 0.5)).toBe(500);
    expect(backoffDelay(2, full, () => 0.25)).toBe(1_000);
    expect(backoffDelay(5, full, () => 0.5)).toBe(4_000);
  });

  it('spread jitter spans [d·(1−j), d·(1+j)) around the schedule', () => {
    expect(backoffDelay(0, spread, () => 0)).toBe(500);
    expect(backoffDelay(0, spread, () => 0.5)).toBe(1_000);
    expect(backoffDelay(1, spread, () => 1)).toBe(3_000);
    expect(backoffDelay(1, { ...spread, jitter: { spread: 0 } }, () => 0.9)).toBe(2_000);
  });

  it('caps the schedule before jitter, at any retry count', () => {
    expect(backoffDelay(3, equal, () => 1)).toBe(8_000);
    expect(backoffDelay(10, equal, () => 1)).toBe(8_000);
    expect(backoffDelay(10_000, { ...equal, capMs: Infinity }, () => 1)).toBe(1_000 * 2 ** 30);
    expect(backoffDelay(10_000, { ...spread, maxExponent: Infinity }, () => 0.5)).toBe(8_000);
  });

  it('counts a negative retry as the first, and honours factor and maxExponent', () => {
    expect(backoffDelay(-3, equal, () => 1)).toBe(1_000);
    expect(backoffDelay(2, { ...equal, factor: 3, capMs: Infinity }, () => 1)).toBe(9_000);
    expect(backoffDelay(5, { ...equal, maxExponent: 1 }, () => 1)).toBe(2_000);
    expect(backoffDelay(4, { ...equal, baseMs: 0 }, () => 1)).toBe(0);
  });
});

describe('atLeast (a server-requested wait is a floor)', () => {
  it('keeps the delay without a request, or with a shorter one', () => {
    expect(atLeast(1_500, undefined)).toBe(1_500);
    expect(atLeast(1_500, 1_000)).toBe(1_500);
    expect(atLeast(1_500, -5)).toBe(1_500);
  });

  it('waits as long as requested, up to the clamp', () => {
    expect(atLeast(1_500, 30_000)).toBe(30_000);
    expect(atLeast(1_500, 30_000, 20_000)).toBe(20_000);
    expect(atLeast(25_000, 30_000, 20_000)).toBe(25_000);
  });
});
