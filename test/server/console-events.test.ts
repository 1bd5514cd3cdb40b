/**
 * The console's event bus over a real SQLite store, following the runtime's event stream:
 * items stored (by pull intake, ids unknown to the writer, found by a scan; by push intake,
 * with their ids), moved by delivery and replayed become `item` events while a listener is
 * subscribed, and nothing once it left. (test/runtime/events.test.ts checks that the pipeline
 * emits those events.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConsoleEvent } from '../../src/server/console-events.js';
import { createConsole } from '../../src/service/console.js';
import { RuntimeEvents } from '../../src/pipeline/events.js';
import { createLogger } from '../../src/logger.js';
import { openStore } from '../../src/store/index.js';
import { input } from '../contract/store.case.js';
import { eventually } from '../service/serve-process.js';

/** Where each input went: the one enqueue's per-input answers. */
import type { OutboxInput, Store } from '../../src/store/types.js';
const itemsOf = async (s: Pick<Store, 'enqueue'>, items: OutboxInput[]) => (await s.enqueue(items)).items;

const dir = mkdtempSync(join(tmpdir(), 'mailgate-console-events-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('console events', () => {
  it('reports stored, delivered, retried, dead and replayed items to listeners only', async () => {
    const store = await openStore(`sqlite:${join(dir, 'store.db')}`);
    const events = new RuntimeEvents();
    const { bus } = createConsole({
      store,
      routes: new Map([['r', { name: 'r' } as never]]),
      adapters: [],
      logger: createLogger(false),
      events,
    });
    const ref = { route: 'r', adapter: 'files' };
    const pulled = (n: number) => events.emit('item:stored', { ...ref, key: `k${n}`, outcome: 'queued', via: 'pull' });
    try {
      await store.enqueue([input('r', 1)]);
      const seen: ConsoleEvent[] = [];
      const unsubscribe = bus.subscribe((e) => seen.push(e));
      expect(await bus.status()).toMatchObject({ outbox_depth: { r: 1 } });
      const items = () => seen.flatMap((e) => (e.type === 'item' ? [[e.data.id, e.data.state]] : []));

      await store.enqueue([input('r', 2), input('r', 3)]);
      pulled(2);
      pulled(3);
      await eventually(() => items().length === 2, 'the new items reported');
      expect(items()).toEqual([
        [2, 'queued'],
        [3, 'queued'],
      ]);
      events.emit('item:stored', { ...ref, key: 'k2', outcome: 'duplicate', via: 'pull' });
      const keyed = await itemsOf(store, [input('r', 4, { key: 'sha256:4' })]);
      events.emit('item:stored', { ...ref, id: keyed[0]!.id, key: 'sha256:4', outcome: 'queued', via: 'push' });
      events.emit('item:unchanged', { ...ref, id: 1 });
      events.emit('item:retrying', { ...ref, id: 2, code: 'MAILGATE_ERR_API_SERVER', message: '503', attempts: 1, delayMs: 1_000 });
      events.emit('item:dead', { ...ref, id: 3, code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no', reason: 'rejected' });
      events.emit('item:replayed', { ...ref, id: 3, state: 'dead' });
      events.emit('item:delivered', { ...ref, id: 2 });
      expect(items().slice(2)).toEqual([
        [keyed[0]!.id, 'queued'],
        [1, 'unchanged'],
        [2, 'retrying'],
        [3, 'dead'],
        [3, 'dead'],
        [2, 'delivered'],
      ]);

      unsubscribe();
      expect(bus.active).toBe(false);
      await store.enqueue([input('r', 5)]);
      pulled(5);
      events.emit('item:delivered', { ...ref, id: keyed[0]!.id });
      expect(items()).toHaveLength(8);
    } finally {
      bus.close();
      await store.close();
    }
  });
});
