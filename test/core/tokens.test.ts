import { describe, expect, it } from 'vitest';
import { createTokenCache, type AccessToken } from '../../src/tokens.js';

/** A token source on a pinned clock: token n lives `lifeMs` from when it is issued. */
function source(lifeMs: number) {
  const clock = { t: 1_000_000 };
  const calls: boolean[] = [];
  let n = 0;
  let fail: Error | undefined;
  const fetch = async ({ fresh }: { fresh: boolean }): Promise<AccessToken> => {
    calls.push(fresh);
    await Promise.resolve();
    if (fail) throw fail;
    n += 1;
    return { token: `t${n}`, expiresAt: clock.t + lifeMs };
  };
  return { clock, calls, fetch, failWith: (e: Error | undefined) => (fail = e) };
}

describe('token cache', () => {
  it('answers the cached token until renewBeforeMs before expiry, then fetches a new one', async () => {
    const s = source(3_600_000);
    const cache = createTokenCache(s.fetch, { renewBeforeMs: 300_000, now: () => s.clock.t });
    expect(await cache.get()).toBe('t1');
    s.clock.t += 3_000_000;
    expect(await cache.get()).toBe('t1');
    s.clock.t += 300_001;
    expect(await cache.get()).toBe('t2');
    expect(s.calls).toEqual([false, false]);
    expect(cache.fetches).toBe(2);
  });

  it('renews a short-lived token at half its lifetime', async () => {
    const s = source(60_000);
    const cache = createTokenCache(s.fetch, { renewBeforeMs: 300_000, now: () => s.clock.t });
    expect(await cache.get()).toBe('t1');
    s.clock.t += 29_999;
    expect(await cache.get()).toBe('t1');
    s.clock.t += 1;
    expect(await cache.get()).toBe('t2');
  });

  it('concurrent callers share one fetch', async () => {
    const s = source(3_600_000);
    const cache = createTokenCache(s.fetch, { now: () => s.clock.t });
    const got = await Promise.all([cache.get(), cache.get(), cache.get()]);
    expect(got).toEqual(['t1', 't1', 't1']);
    expect(s.calls).toHaveLength(1);
  });

  it('a refused token is dropped once: the next get fetches fresh, a second refusal of the old token changes nothing', async () => {
    const s = source(3_600_000);
    const cache = createTokenCache(s.fetch, { now: () => s.clock.t });
    expect(await cache.get()).toBe('t1');
    cache.invalidate('t1');
    const renewed = await Promise.all([cache.get(), cache.get()]);
    expect(renewed).toEqual(['t2', 't2']);
    cache.invalidate('t1');
    expect(await cache.get()).toBe('t2');
    expect(s.calls).toEqual([false, true]);
  });

  it('a failed fetch is not cached; the next get tries again', async () => {
    const s = source(3_600_000);
    const cache = createTokenCache(s.fetch, { now: () => s.clock.t });
    s.failWith(new Error('token endpoint down'));
    await expect(cache.get()).rejects.toThrow('token endpoint down');
    s.failWith(undefined);
    expect(await cache.get()).toBe('t1');
  });

  it("a caller's abort ends its wait, not the shared fetch", async () => {
    const s = source(3_600_000);
    const cache = createTokenCache(s.fetch, { now: () => s.clock.t });
    const ac = new AbortController();
    const aborted = cache.get(ac.signal);
    const other = cache.get();
    ac.abort(new Error('stopping'));
    await expect(aborted).rejects.toThrow('stopping');
    expect(await other).toBe('t1');
  });
});
