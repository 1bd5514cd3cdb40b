import { describe, expect, it } from 'vitest';
import { IdempotencyCache } from '../../adapters/upload/idempotency.js';
import type { PushResponse } from '../../src/pipeline/types.js';

describe('IdempotencyCache', () => {
  it('runs a key once while a second request with it waits for the first answer', async () => {
    const cache = new IdempotencyCache(10);
    let runs = 0;
    let release: (r: PushResponse) => void = () => undefined;
    const run = () => {
      runs++;
      return new Promise<PushResponse>((resolve) => (release = resolve));
    };
    const first = cache.answer('k', 'p', run);
    const second = cache.answer('k', 'p', run);
    release({ status: 202, body: { n: 1 } });
    expect(await first).toEqual({ status: 202, body: { n: 1 } });
    expect(await second).toEqual({ status: 202, body: { n: 1 } });
    expect(runs).toBe(1);
    expect(await cache.answer('k', 'other', run)).toBe('conflict');
  });

  it('forgets failed answers and drops the oldest key past its capacity', async () => {
    const cache = new IdempotencyCache(2);
    let runs = 0;
    const ok = async (): Promise<PushResponse> => ({ status: 202, body: ++runs });
    expect(await cache.answer('fail', 'p', async () => ({ status: 503 }))).toEqual({ status: 503 });
    expect(await cache.answer('fail', 'p', ok)).toEqual({ status: 202, body: 1 });
    await cache.answer('b', 'p', ok);
    await cache.answer('c', 'p', ok);
    // 'fail' was the oldest of three: it runs again, 'c' is still remembered.
    expect(await cache.answer('fail', 'p', ok)).toEqual({ status: 202, body: 4 });
    expect(await cache.answer('c', 'p', ok)).toEqual({ status: 202, body: 3 });
    const none = new IdempotencyCache(0);
    await none.answer('x', 'p', ok);
    expect(await none.answer('x', 'q', ok)).toEqual({ status: 202, body: 6 });
  });
});
