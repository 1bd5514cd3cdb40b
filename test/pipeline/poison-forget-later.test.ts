/**
 * Pushed mail's parse-attempt counts are forgotten together after the sender's answer
 * (`PoisonGuard.forgetLater`): the keys of many calls in one store write per route, after
 * FORGET_LATER_MS, and at once when enough are gathered. Real SQLite store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FORGET_LATER_MS, poisonGuard } from '../../src/pipeline/poison.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/** A store whose clearParseAttempts calls are recorded (route and keys of each write). */
async function counted(): Promise<{ store: Store; clears: Array<[string, string[]]> }> {
  const store = await openStore('sqlite::memory:');
  stores.push(store);
  const clears: Array<[string, string[]]> = [];
  const clear = store.clearParseAttempts.bind(store);
  store.clearParseAttempts = (route, keys) => {
    clears.push([route, [...keys]]);
    return clear(route, keys);
  };
  return { store, clears };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('poison counts of pushed mail forgotten later', () => {
  it('forgets the keys of many pushes in one write per route, once FORGET_LATER_MS passed', async () => {
    const { store, clears } = await counted();
    const guard = poisonGuard(store, 3);
    expect(await guard.begin('r', ['a', 'b', 'c'])).toEqual(new Set(['a', 'b', 'c']));
    expect(await guard.begin('q', ['a'])).toEqual(new Set(['a']));
    guard.forgetLater('r', ['a']);
    await sleep(1);
    guard.forgetLater('r', ['b']);
    guard.forgetLater('q', ['a']);
    guard.forgetLater('r', []);
    // Not yet: the counts are still there until the window closes.
    expect(await store.parseAttempts('r', ['a', 'b', 'c'])).toEqual(
      new Map([
        ['a', 1],
        ['b', 1],
        ['c', 1],
      ]),
    );
    await sleep(FORGET_LATER_MS + 50);
    expect(clears).toEqual([
      ['r', ['a', 'b']],
      ['q', ['a']],
    ]);
    expect(await store.parseAttempts('r', ['a', 'b', 'c'])).toEqual(new Map([['c', 1]]));
    expect(await store.parseAttempts('q', ['a'])).toEqual(new Map());
  });

  it('writes at once when a thousand keys are gathered, without waiting for the window', async () => {
    const { store, clears } = await counted();
    const guard = poisonGuard(store, 3);
    const keys = Array.from({ length: 1_000 }, (_, i) => `k${i}`);
    await guard.begin('r', keys);
    guard.forgetLater('r', keys.slice(0, 600));
    guard.forgetLater('r', keys.slice(600));
    await sleep(5);
    expect(clears.map(([, k]) => k.length)).toEqual([1_000]);
    expect(await store.parseAttempts('r', keys)).toEqual(new Map());
  });

  it('a failing write is dropped quietly (a leftover count is harmless)', async () => {
    const { store } = await counted();
    const guard = poisonGuard(store, 3);
    store.clearParseAttempts = () => Promise.reject(new Error('store down'));
    guard.forgetLater('r', ['a']);
    await sleep(FORGET_LATER_MS + 50);
    // No unhandled rejection fails the run; the next begin still works.
    expect(await guard.begin('r', ['b'])).toEqual(new Set(['b']));
  });
});
