import { describe, expect, it } from 'vitest';
import { RuntimeEvents } from '../../src/pipeline/events.js';
import { PULL_BATCH_ITEMS, wakeDelivery } from '../../src/runtime/wake-delivery.js';

/** Reports `n` stored items of one call, as intake does: one event each, in one go. */
function storeCall(events: RuntimeEvents, n: number, via: 'pull' | 'push', outcome: 'queued' | 'duplicate' = 'queued'): void {
  for (let i = 0; i < n; i++) events.emit('item:stored', { route: 'r', adapter: 'imap', key: `k${i}`, via, outcome });
}

const microtasks = () => new Promise<void>((r) => setImmediate(r));

describe('stored items and delivery', () => {
  it('a pull call of a whole batch ends the flush wait once; a few new messages, push calls and duplicates only wake idle workers', async () => {
    const events = new RuntimeEvents();
    const calls = { wake: 0, flush: 0 };
    wakeDelivery(events, { wake: () => void calls.wake++, flush: () => void calls.flush++ });
    storeCall(events, 3, 'pull'); // a mailbox's new mail: shares a request with what else comes within flush_ms
    await microtasks();
    expect(calls).toEqual({ wake: 3, flush: 0 });
    storeCall(events, PULL_BATCH_ITEMS, 'pull'); // a backfill chunk: goes out at once
    await microtasks();
    expect(calls).toEqual({ wake: 3 + PULL_BATCH_ITEMS, flush: 1 });
    storeCall(events, 2 * PULL_BATCH_ITEMS, 'push');
    storeCall(events, PULL_BATCH_ITEMS, 'pull', 'duplicate');
    await microtasks();
    expect(calls.flush).toBe(1);
    storeCall(events, PULL_BATCH_ITEMS - 1, 'pull'); // counted afresh: the earlier calls do not add up
    await microtasks();
    expect(calls.flush).toBe(1);
  });
});
