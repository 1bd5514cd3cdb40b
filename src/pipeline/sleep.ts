import { setTimeout as delay } from 'node:timers/promises';

/**
 * Waits `ms`, or less when the signal aborts, and resolves either way: the idle waits of
 * long-running loops end early on shutdown, which is not a failure. Leaves no listener behind.
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, signal === undefined ? undefined : { signal });
  } catch (err) {
    if (signal?.aborted !== true) throw err;
  }
}
