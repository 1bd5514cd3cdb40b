/**
 * Pull calls' wait for room (`Admission.waitForRoom`) counts the outbox once and then keeps the
 * depth it read, plus what the calls it let through stored, rather than counting the route's
 * backlog before every call (one COUNT per 500 messages of an import, each a round trip and a
 * scan of the route's queued items on PostgreSQL). A depth that says the route is full is read
 * again, so the limit holds as before.
 */
import { describe, expect, it } from 'vitest';
import { admission } from '../../src/pipeline/admission.js';

/** A store whose queued items the test sets, counting the depth reads. */
function fakeStore(): { store: Parameters<typeof admission>[0]['store']; reads: () => number; set: (n: number) => void } {
  let depth = 0;
  let reads = 0;
  return {
    store: {
      outboxDepth: async () => ((reads += 1), depth),
      findKeys: async () => new Map(),
    },
    reads: () => reads,
    set: (n) => void (depth = n),
  };
}

describe('admission: the depth of a route with room is not counted before every pull call', () => {
  it('lets twenty calls of five through with one depth read while the route has room', async () => {
    const s = fakeStore();
    const room = admission({ store: s.store, maxOutbox: 1_000, pollMs: 5 });
    for (let i = 0; i < 20; i++) {
      const release = await room.waitForRoom(Array.from({ length: 5 }, () => 'r'));
      s.set((i + 1) * 5);
      release();
    }
    expect(s.reads()).toBe(1);
  });

  it('counts what the calls let through stored, and reads the depth again once that reaches the limit', async () => {
    const s = fakeStore();
    const room = admission({ store: s.store, maxOutbox: 10, pollMs: 5 });
    for (let i = 0; i < 2; i++) {
      const release = await room.waitForRoom(Array.from({ length: 5 }, () => 'r'));
      s.set((i + 1) * 5);
      release();
    }
    expect(s.reads()).toBe(1);
    // The kept depth (0 read + 10 stored) says full: the next call reads it again and waits
    // while the store says full, then goes on once delivery made room.
    let through = false;
    const next = room.waitForRoom(['r']).then((release) => ((through = true), release));
    await new Promise((r) => setTimeout(r, 30));
    expect(through).toBe(false);
    expect(s.reads()).toBeGreaterThan(2);
    s.set(4);
    (await next)();
    expect(through).toBe(true);
  });
});
