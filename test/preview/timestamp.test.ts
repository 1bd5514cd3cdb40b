import { describe, expect, it } from 'vitest';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from '../../src/limits.js';
import { prng } from '../../src/prng.js';
import { isoInRange } from '../../src/preview/timestamp.js';

describe('isoInRange', () => {
  it('writes what toISOString writes, at the ends of the range and on calendar edges', () => {
    const times = [
      MIN_TIMESTAMP_MS,
      MAX_TIMESTAMP_MS,
      MAX_TIMESTAMP_MS + 999,
      -1,
      0,
      Date.UTC(1969, 11, 31, 23, 59, 59, 999),
      Date.UTC(2000, 1, 29, 12, 0, 0, 7),
      Date.UTC(2000, 2, 1) - 1,
      Date.UTC(1952, 1, 29, 0, 0, 0, 10),
      Date.UTC(2024, 11, 31, 23, 59, 59, 100),
    ];
    for (const t of times) expect(isoInRange(t)).toBe(new Date(t).toISOString());
  });

  it('writes what toISOString writes for any millisecond of 1950-2049', () => {
    const rand = prng(1950);
    const wrong: number[] = [];
    for (let n = 0; n < 50_000; n++) {
      const t = MIN_TIMESTAMP_MS + Math.floor(rand() * (MAX_TIMESTAMP_MS - MIN_TIMESTAMP_MS + 1));
      if (isoInRange(t) !== new Date(t).toISOString()) wrong.push(t);
    }
    expect(wrong).toEqual([]);
  });
});
