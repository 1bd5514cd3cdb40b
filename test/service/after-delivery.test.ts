/** The after-delivery queue: actions only for what it is given, in order, retried while the mailbox is unreachable. */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { Origin } from '../../src/pipeline/types.js';
import { createAfterDeliveryQueue } from '../../src/service/after-delivery.js';

const origin = (uid: number): Origin => ({ adapter: 'imap', account: 'a', folder: 'INBOX', uidValidity: 1, uid });

describe('after-delivery queue', () => {
  it('applies the origins pushed, in order, retrying after failures', async () => {
    const seen: number[][] = [];
    let failuresLeft = 2;
    const queue = createAfterDeliveryQueue(
      {
        async afterDelivery(origins) {
          if (failuresLeft-- > 0) throw new Error('mailbox unreachable');
          seen.push(origins.map((o) => o.uid!));
          return { applied: origins, skipped: [] };
        },
      },
      createLogger(false),
      { baseDelayMs: 1, maxDelayMs: 2, chunk: 2 },
    );
    queue.push([origin(1), origin(2), origin(3)]);
    queue.push([origin(4)]);
    await queue.close();
    expect(seen.flat()).toEqual([1, 2, 3, 4]);
    expect(queue.applied).toBe(4);
    expect(queue.pending).toBe(0);
  });

  it('on a forced close leaves pending origins alone (nothing applied that was not confirmed)', async () => {
    const queue = createAfterDeliveryQueue(
      {
        async afterDelivery() {
          throw new Error('mailbox unreachable');
        },
      },
      createLogger(false),
      { baseDelayMs: 60_000, maxDelayMs: 60_000 },
    );
    queue.push([origin(1)]);
    const force = new AbortController();
    const closed = queue.close(force.signal);
    force.abort();
    await closed;
    expect(queue.applied).toBe(0);
    expect(queue.pending).toBe(1);
  });
});
