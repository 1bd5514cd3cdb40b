/**
 * Many adapters (or IMAP accounts) on one abort signal: each listens on its own fanned-out
 * signal, so the shared signal carries one listener (Node 20 printed a MaxListenersExceededWarning
 * past 10; Node 22 and later no longer warn for an AbortSignal, so the tests count the listeners),
 * and aborting it still stops every one of them.
 */
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ImapAdapter } from '../../adapters/imap/index.js';
import { createLogger } from '../../src/logger.js';
import type { Adapter, Intake } from '../../src/pipeline/types.js';
import { entryOf, runAdapters } from '../../src/runtime/adapters.js';
import { closedPort } from '../imap/setup.js';
import { MemorySink } from '../imap/memory-sink.js';

let warnings: Error[] = [];
const onWarning = (w: Error): void => void warnings.push(w);
const listenerWarnings = (): Error[] => warnings.filter((w) => w.name === 'MaxListenersExceededWarning');
beforeEach(() => {
  warnings = [];
  process.on('warning', onWarning);
});
afterEach(() => void process.off('warning', onWarning));

/** Lets emitted warnings (delivered on the next tick) reach the listener. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

/** An adapter that listens on its signal until it aborts, as push and IMAP adapters do. */
function waitingAdapter(name: string): Adapter {
  return {
    kind: 'test',
    name,
    mode: 'push',
    start: (_sink: Intake, signal: AbortSignal) =>
      new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
  } as Adapter;
}

describe('abort listeners on the shared signal', () => {
  it('20 listeners added to one signal are 20 listeners on it (what the fan-out avoids)', () => {
    const ctl = new AbortController();
    for (let i = 0; i < 20; i++) ctl.signal.addEventListener('abort', () => undefined);
    expect(getEventListeners(ctl.signal, 'abort')).toHaveLength(20);
  });

  it('20 adapters run on one signal without a warning, and all stop when it aborts', async () => {
    const entries = Array.from({ length: 20 }, (_, i) => entryOf(waitingAdapter(`a${i}`)));
    const ctl = new AbortController();
    const done = runAdapters(entries, {} as Intake, ctl.signal, { logger: createLogger({ level: 'silent' }) });
    await settle();
    expect(getEventListeners(ctl.signal, 'abort').length).toBeLessThanOrEqual(1);
    ctl.abort();
    await done;
    await settle();
    expect(entries.map((e) => e.state)).toEqual(entries.map(() => 'stopped'));
    expect(listenerWarnings().map((w) => w.message)).toEqual([]);
  });

  it('an IMAP adapter with 20 accounts (waiting to reconnect) adds no listener per account to the signal', async () => {
    const port = await closedPort();
    const accounts = Array.from({ length: 20 }, (_, i) => ({
      name: `acct${i}`,
      route: 'support',
      host: '127.0.0.1',
      port,
      secure: false,
      auth: { user: 'u', pass: 'p' },
      folders: ['INBOX'],
    }));
    const adapter = new ImapAdapter(accounts, { random: () => 0 });
    const ctl = new AbortController();
    const done = adapter.start(new MemorySink(), ctl.signal);
    // Every account failed to connect and now waits (on its signal) for its next attempt.
    while (adapter.accountHealth().some((h) => h.lastError === undefined)) await new Promise((r) => setTimeout(r, 10));
    await settle();
    expect(getEventListeners(ctl.signal, 'abort').length).toBeLessThanOrEqual(1);
    ctl.abort();
    await done;
    expect(listenerWarnings().map((w) => w.message)).toEqual([]);
  });
});
