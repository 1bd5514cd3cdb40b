/**
 * Many accounts in one process against one Dovecot: connection attempts go through the
 * process's pacer — at first start and when the server restarts and every connection drops at
 * once — and the server sees no more connections than the pacer granted. The pacer's clock is
 * driven by the test, so the bound is counted, not timed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionPacer } from '../../src/pipeline/pacer.js';
import { manualClock } from './manual-clock.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { MemorySink, eventually } from './memory-sink.js';
import { startProxy, type Proxy } from './proxy.js';
import { account, run } from './setup.js';

const ACCOUNTS = 24;

/**
 * One turn of the event loop. `eventually` returns without a timer when its condition already
 * holds, so a loop of them alone never lets sockets and real timers run: an account waiting on
 * one (a login slowed down by a loaded machine, then its backoff) would never become idle and
 * the loop, and the test's own timeout, would starve.
 */
const settle = () => new Promise((r) => setTimeout(r, 10));
const LIMITS = { concurrency: 4, perSecond: 1 };

let server: DovecotServer;
let proxy: Proxy;
const users: Array<{ user: string; pass: string }> = [];
beforeAll(async () => {
  server = await startDovecot();
  proxy = await startProxy(server.port);
  for (let i = 0; i < ACCOUNTS; i++) users.push({ user: `many${process.pid}x${i}`, pass: `pw-many-${i}` });
  await server.addUsers(users);
}, 120_000);
afterAll(async () => {
  await proxy?.close();
  await server?.stop();
});

describe(`${ACCOUNTS} accounts in one process`, () => {
  it('connect through the pacer at start and after a server restart: never more connections than permits', async () => {
    const clock = manualClock();
    const pacer = new ConnectionPacer(LIMITS, clock);
    const accounts = users.map((u) => account(server, u.user, u.pass, { port: proxy.port }));
    const r = run(accounts, new MemorySink(), { pacer });
    const idle = () => r.adapter.accountHealth().filter((h) => h.state === 'idle').length;
    const base = proxy.connections;
    const opened = () => proxy.connections - base;
    try {
      // The burst: `concurrency` permits, then nothing until the clock gives tokens.
      await eventually(() => idle() === LIMITS.concurrency, 30_000, 'the first burst idle');
      expect(opened()).toBe(LIMITS.concurrency);
      expect(pacer.waiting).toBe(ACCOUNTS - LIMITS.concurrency);
      let advanced = 0;
      for (let s = 0; s < 3; s++) {
        clock.advance(1000);
        advanced += 1;
        await eventually(() => idle() === LIMITS.concurrency + advanced, 30_000, `${advanced} more idle`);
        expect(opened()).toBe(pacer.grants);
      }
      expect(opened()).toBeLessThanOrEqual(LIMITS.concurrency + advanced * LIMITS.perSecond);
      while (idle() < ACCOUNTS) {
        clock.advance(1000);
        advanced += 1;
        await eventually(() => pacer.inFlight === 0, 30_000, 'the permits given back');
        await settle();
      }
      expect(opened()).toBe(ACCOUNTS);
      expect(pacer.peakInFlight).toBeLessThanOrEqual(LIMITS.concurrency);

      // Every connection drops at once; reconnects wait for the pacer like first connects.
      clock.advance(10_000); // a full bucket: the burst again
      const before = opened();
      const grantsBefore = pacer.grants;
      await server.restart();
      await eventually(() => pacer.waiting > 0 && pacer.inFlight === 0, 30_000, 'reconnects queued behind the burst');
      const burst = pacer.grants - grantsBefore;
      expect(burst).toBeLessThanOrEqual(LIMITS.concurrency);
      expect(opened() - before).toBe(burst);
      while (idle() < ACCOUNTS) {
        clock.advance(1000);
        await eventually(() => pacer.inFlight === 0, 30_000, 'the permits given back');
        expect(opened() - before).toBe(pacer.grants - grantsBefore);
        await settle();
      }
      expect(pacer.peakInFlight).toBeLessThanOrEqual(LIMITS.concurrency);
    } finally {
      await r.stop();
    }
    expect(r.adapter.accountHealth().every((h) => h.state === 'stopped')).toBe(true);
  }, 180_000);
});
