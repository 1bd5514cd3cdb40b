import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../src/pipeline/sleep.js';

describe('sleep (idle waits of long-running loops)', () => {
  it('leaves no abort listener behind after many waits on one signal (listener leak in idle delivery loops)', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 50; i++) await sleep(0, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('returns early when the signal aborts, and removes its listener', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    await waiting;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('returns at once on a signal aborted before the call', async () => {
    const waiting = sleep(600_000, AbortSignal.abort());
    const result = await Promise.race([waiting.then(() => 'returned'), new Promise((r) => setTimeout(() => r('still waiting'), 1_000))]);
    expect(result).toBe('returned');
  });
});
