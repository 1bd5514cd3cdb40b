/**
 * The cross-replica wake board over a SQLite store opened twice (two processes' handles): a
 * signal written by one is seen by the other, a watch waits in slices and ends on a new signal,
 * and the baseline read at the start does not count as a wake-up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWakeBoard, WakeWatch } from '../../src/pipeline/wake-board.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';

const KEY = 'graph:m365/one@contoso.test';
let dir: string;
let a: Store;
let b: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-wake-board-'));
  a = await openStore(`sqlite:${join(dir, 'store.db')}`);
  b = await openStore(`sqlite:${join(dir, 'store.db')}`);
});
afterEach(async () => {
  await a.close();
  await b.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('wake board', () => {
  it('a signal from one handle is seen by the other, each one distinct', async () => {
    const sender = createWakeBoard(a);
    const reader = createWakeBoard(b);
    expect(await reader.watch(KEY)).toBeUndefined();
    await sender.signal(KEY);
    const first = await reader.watch(KEY);
    expect(first).toBeDefined();
    await sender.signal(KEY);
    const second = await reader.watch(KEY);
    expect(second).not.toBe(first);
    expect(await reader.watch('graph:m365/two@contoso.test')).toBeUndefined();
    expect(await b.getCheckpoint(`wake:${KEY}`)).toBeDefined();
  });

  it('a watch ignores the signal it started with and ends on the next one', async () => {
    const sender = createWakeBoard(a);
    await sender.signal(KEY);
    const watch = new WakeWatch(createWakeBoard(b), KEY, 20);
    await watch.baseline();
    // Nothing new: the whole wait passes.
    expect(await watch.sleep(100, new AbortController().signal)).toBe(false);
    const woken = watch.sleep(600_000, new AbortController().signal);
    await sender.signal(KEY);
    expect(await woken).toBe(true);
    // Stopping ends the wait without a wake-up.
    const stop = new AbortController();
    const stopped = watch.sleep(600_000, stop.signal);
    stop.abort();
    expect(await stopped).toBe(false);
  });

  it('a note rides with its signal, survives a later plain signal, and is taken once by the reader', async () => {
    const sender = createWakeBoard(a);
    const watch = new WakeWatch(createWakeBoard(b), KEY, 20);
    await watch.baseline();
    await sender.signal(KEY, { subscription: 'sub-1', event: 'subscriptionRemoved' });
    // A change notification signalled right after must not wipe the note.
    await sender.signal(KEY);
    expect(await watch.sleep(600_000, new AbortController().signal)).toBe(true);
    expect(watch.takeNotes()).toEqual([{ subscription: 'sub-1', event: 'subscriptionRemoved' }]);
    expect(watch.takeNotes()).toEqual([]);
    await sender.signal(KEY, { subscription: 'sub-2', event: 'reauthorizationRequired' });
    expect(await watch.sleep(600_000, new AbortController().signal)).toBe(true);
    expect(watch.takeNotes()).toEqual([{ subscription: 'sub-2', event: 'reauthorizationRequired' }]);
  });
});
