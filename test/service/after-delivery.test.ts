/**
 * The after-delivery queue, on a real SQLite store: actions only for accepted items enqueued
 * with one, in id order, retried while the mailbox is unreachable, and still due after a
 * crash or a forced close.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { Origin } from '../../src/pipeline/types.js';
import { imapOrigin } from '../../adapters/imap/identity.js';
import { createAfterDeliveryQueue, type ActionTarget } from '../../src/pipeline/after-delivery.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';

const origin = (uid: number): Origin => imapOrigin('a', 'INBOX', 1, uid);

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-actions-'));
  store = await openStore(`sqlite:${join(dir, 'm.db')}`);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Enqueues uids 1..n (all with an action but `without`), delivers `deliver`, and returns the ids by uid. */
async function deliver(n: number, deliverUids: number[], without: number[] = []): Promise<void> {
  await store.enqueue(
    Array.from({ length: n }, (_, i) => ({
      route: 'r',
      key: `imap:a:INBOX:1:${i + 1}`,
      commentId: `c${i + 1}`,
      document: { raw_email: { headers: { raw: 'Subject: x' }, body: { plain: 'x' } } },
      origin: origin(i + 1),
      ...(without.includes(i + 1) ? {} : { afterDelivery: true }),
    })),
  );
  const items = await store.claim('r', 1000, 'w', 60_000);
  await store.markDelivered(
    items.filter((i) => deliverUids.includes(i.origin.details['uid'] as number)).map((i) => i.id),
    { outcome: 'delivered' },
  );
}

function recorder(failures = 0): ActionTarget & { seen: number[][] } {
  let left = failures;
  const seen: number[][] = [];
  return {
    seen,
    async afterDelivery(origins) {
      if (left-- > 0) throw new Error('mailbox unreachable');
      seen.push(origins.map((o) => o.details['uid'] as number));
      return { applied: origins, skipped: [] };
    },
  };
}

describe('after-delivery queue', () => {
  it('says so when the target leaves a page of actions unanswered, and applies them once it answers', async () => {
    await deliver(3, [1, 2, 3]);
    let answer: (() => void) | undefined;
    const target: ActionTarget = {
      async afterDelivery(origins) {
        await new Promise<void>((r) => (answer = r));
        return { applied: origins, skipped: [] };
      },
    };
    const lines: Array<{ level: string; msg: string; count?: number }> = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as (typeof lines)[number]);
        done();
      },
    });
    const queue = createAfterDeliveryQueue(target, store, createLogger({ destination }), { slowAnswerMs: 30 });
    while (!lines.some((l) => l.level === 'warn')) await new Promise((r) => setTimeout(r, 10));
    expect(lines.filter((l) => l.level === 'warn')).toEqual([
      expect.objectContaining({ count: 3, msg: expect.stringContaining('no answer for 30 ms about 3 action(s); they stay due') }),
    ]);
    expect(queue.applied).toBe(0);
    answer!();
    while (queue.applied < 3) await new Promise((r) => setTimeout(r, 10));
    await queue.close();
    // One warning for the page, not one per turn of the wait.
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
  });

  it('applies the actions of delivered items only, in order, retrying after failures', async () => {
    await deliver(6, [1, 2, 3, 5, 6], [6]);
    const target = recorder(2);
    const queue = createAfterDeliveryQueue(target, store, createLogger(false), { baseDelayMs: 1, maxDelayMs: 2, chunk: 2 });
    await queue.close();
    expect(target.seen).toEqual([
      [1, 2],
      [3, 5],
    ]);
    expect(queue.applied).toBe(4);
    expect(queue.pending).toBe(0);
    expect(await store.pendingActions(10)).toEqual([]);
  });

  it('picks up items delivered while it waits, when woken', async () => {
    const target = recorder();
    // The queue's first pass finds nothing due; after it the queue waits its ten-minute poll.
    let firstPass!: () => void;
    const idle = new Promise<void>((r) => (firstPass = r));
    const pendingActions = store.pendingActions.bind(store);
    store.pendingActions = async (...args) => {
      const due = await pendingActions(...args);
      if (due.length === 0) firstPass();
      return due;
    };
    const queue = createAfterDeliveryQueue(target, store, createLogger(false), { pollMs: 600_000 });
    await idle;
    await new Promise((r) => setImmediate(r));
    await deliver(2, [1, 2]);
    queue.wake();
    // Polled until done (a queue that was not woken would fail on the test's own timeout).
    while (queue.applied < 2) await new Promise((r) => setTimeout(r, 20));
    expect(target.seen.flat()).toEqual([1, 2]);
    await queue.close();
  });

  it('finishes what the target applied and keeps what it deferred due, without holding up later items', async () => {
    // Account "down" owns uids 1 and 4; the others belong to a reachable mailbox.
    const owner = (uid: number): string => (uid === 1 || uid === 4 ? 'down' : 'a');
    await store.enqueue(
      [1, 2, 3, 4, 5].map((uid) => ({
        route: 'r',
        key: `k${uid}`,
        commentId: `c${uid}`,
        afterDelivery: true,
        document: { raw_email: { headers: { raw: 'Subject: x' }, body: { plain: 'x' } } },
        origin: { ...origin(uid), instance: owner(uid) },
      })),
    );
    const items = await store.claim('r', 10, 'w', 60_000);
    await store.markDelivered(
      items.map((i) => i.id),
      { outcome: 'delivered' },
    );
    const seen: number[] = [];
    const target: ActionTarget = {
      async afterDelivery(origins) {
        const mine = origins.filter((o) => o.instance === 'a');
        seen.push(...mine.map((o) => o.details['uid'] as number));
        return { applied: mine, skipped: [], deferred: origins.filter((o) => o.instance === 'down') };
      },
    };
    const queue = createAfterDeliveryQueue(target, store, createLogger(false), { baseDelayMs: 20, maxDelayMs: 50, chunk: 2 });
    while (queue.applied < 3) await new Promise((r) => setTimeout(r, 20));
    const force = new AbortController();
    const closed = queue.close(force.signal);
    force.abort();
    await closed;
    expect([...new Set(seen)]).toEqual([2, 3, 5]);
    expect(queue.applied).toBe(3);
    expect((await store.pendingActions(10)).map((d) => d.origin.details['uid'])).toEqual([1, 4]);
  });

  it('applies deferred actions at the first backoff step once the mailbox is back, however often delivery woke it during the outage', async () => {
    await deliver(1, [1]);
    let down = true;
    let calls = 0;
    const target: ActionTarget = {
      async afterDelivery(origins) {
        calls += 1;
        return down ? { applied: [], skipped: [], deferred: origins } : { applied: origins, skipped: [] };
      },
    };
    // A long cap: a backoff grown by the wake-ups would hold the action for minutes.
    const queue = createAfterDeliveryQueue(target, store, createLogger(false), { baseDelayMs: 50, maxDelayMs: 600_000, pollMs: 600_000 });
    // Every batch delivered during the outage wakes the queue; each wake is one more deferred pass.
    for (let i = 0; i < 30; i++) {
      const before = calls;
      queue.wake();
      while (calls === before) await new Promise((r) => setTimeout(r, 5));
    }
    down = false;
    // No wake-up after the outage: the queue's own backoff must bring the action.
    for (let i = 0; i < 400 && queue.applied === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(queue.applied).toBe(1);
    await queue.close();
  });

  it('leaves actions due on a forced close; a new queue on the same store applies them', async () => {
    await deliver(1, [1]);
    const failing = createAfterDeliveryQueue(recorder(Infinity), store, createLogger(false), { baseDelayMs: 60_000, maxDelayMs: 60_000 });
    const force = new AbortController();
    const closed = failing.close(force.signal);
    force.abort();
    await closed;
    expect(failing.applied).toBe(0);
    expect((await store.pendingActions(10)).map((d) => d.origin.details['uid'])).toEqual([1]);

    const target = recorder();
    const next = createAfterDeliveryQueue(target, store, createLogger(false));
    await next.close();
    expect(target.seen).toEqual([[1]]);
  });
});
