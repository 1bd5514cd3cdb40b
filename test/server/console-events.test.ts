/**
 * The console's event bus over a real SQLite store, through the service's store wrapper:
 * items stored (ids unknown to the writer, found by a scan), moved by delivery and replayed
 * become `item` events while a listener is subscribed, and nothing once it left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConsoleEvent } from '../../src/server/console-events.js';
import { createConsole } from '../../src/service/console.js';
import { reportingStore } from '../../src/service/console-store.js';
import { createLogger } from '../../src/logger.js';
import { openStore } from '../../src/store/index.js';
import { input } from '../contract/store.case.js';
import { eventually } from '../service/serve-process.js';

const dir = mkdtempSync(join(tmpdir(), 'mailgate-console-events-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('console events', () => {
  it('reports stored, delivered, retried, dead and replayed items to listeners only', async () => {
    const opened = await openStore(`sqlite:${join(dir, 'store.db')}`);
    const holder: { store?: typeof opened } = {};
    const { bus } = createConsole({
      store: () => holder.store!,
      routes: new Map([['r', { name: 'r' } as never]]),
      adapters: () => [],
      logger: createLogger(false),
    });
    const store = reportingStore(opened, bus);
    holder.store = store;
    try {
      await store.enqueue([input('r', 1)]);
      const events: ConsoleEvent[] = [];
      const unsubscribe = bus.subscribe((e) => events.push(e));
      expect(await bus.status()).toMatchObject({ outbox_depth: { r: 1 } });
      const items = () => events.flatMap((e) => (e.type === 'item' ? [[e.data.id, e.data.state]] : []));

      await store.enqueue([input('r', 2), input('r', 3)]);
      await eventually(() => items().length === 2, 'the new items reported');
      expect(items()).toEqual([
        [2, 'queued'],
        [3, 'queued'],
      ]);
      await store.enqueue([input('r', 2)]);
      const keyed = await store.enqueueKeyed([input('r', 4, { key: 'sha256:4' })]);
      await store.claim('r', 10, 'w', 60_000);
      await store.markDelivered([1], { outcome: 'unchanged' });
      await store.scheduleRetry([2], 1_000, { code: 'MAILGATE_ERR_API_SERVER', message: '503' });
      await store.deadLetter(3, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' });
      await store.replayDeadLetter(3, input('r', 3, { error: { code: 'MAILGATE_ERR_MIME_EMPTY', message: 'empty' } }));
      await eventually(() => items().length === 7, 'every change reported');
      expect(items().slice(2)).toEqual([
        [keyed[0]!.id, 'queued'],
        [1, 'unchanged'],
        [2, 'retrying'],
        [3, 'dead'],
        [3, 'dead'],
      ]);

      unsubscribe();
      expect(bus.active).toBe(false);
      await store.enqueue([input('r', 5)]);
      await store.markDelivered([keyed[0]!.id], { outcome: 'delivered' });
      expect(items()).toHaveLength(7);
    } finally {
      bus.close();
      await store.close();
    }
  });
});
