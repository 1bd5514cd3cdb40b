/**
 * Retention through the real pipeline (SQLite, intake, delivery, the emulator over HTTP): items
 * pruned after delivery are forgotten by the outbox, and a message read again afterwards is
 * stored again but costs no AI units — the ledger outlives the items; the thread index loses a
 * thread once it is old and none of its items is left, walked a bounded number of steps a round;
 * parse-attempt counts left behind go once old.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { createDeliverFn, createDelivery } from '../../src/pipeline/delivery/index.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { createIntake } from '../../src/pipeline/intake.js';
import { createRetention, THREAD_STEPS_PER_ROUND } from '../../src/pipeline/retention.js';
import { createWakeBoard, WAKE_KEEP_MS } from '../../src/pipeline/wake-board.js';
import { preview } from '../../src/preview/index.js';
import { openStore } from '../../src/store/index.js';
import { createLogger } from '../../src/logger.js';
import { startEmulator } from '../support/emulator.js';
import { fileOrigin } from '../../adapters/files/identity.js';

const config = ConfigSchema.parse({ routes: [{ name: 'r', source: 'acme/kept' }], retention: { delivered_s: 3600, batch: 3 } });
const route = config.routes[0]!;
const DAY = 86_400_000;
const msg = (i: number) =>
  Buffer.from(
    `From: A <a@x.com>\r\nTo: b@y.com\r\nSubject: s${i}\r\nMessage-ID: <kept${i}@x.com>\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\n\r\nbody ${i}\r\n`,
  );

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

describe('retention', () => {
  it('bills 0 for a message read again after its item was pruned: the ledger outlives it', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    const store = await openStore('sqlite::memory:');
    cleanup.push(
      () => emu.stop(),
      () => store.close(),
    );
    const routes = new Map([[route.name, route]]);
    const intake = createIntake({
      store,
      routes,
      parse: async (raw, o) => encodePreview(await preview(raw, o)),
      parsing: {},
      maxOutbox: 1_000,
    });
    const inputs = () =>
      Array.from({ length: 10 }, (_, i) => ({
        raw: msg(i),
        key: `files:/k.mbox:${i}`,
        origin: fileOrigin('/k.mbox', i),
        route: 'r',
        receivedAt: new Date(),
      }));
    const client = createApiClient({ baseUrl: emu.url, token: emu.token, retry: { maxAttempts: 1 } });
    const delivery = createDelivery({
      store,
      routes: [route],
      deliver: createDeliverFn({ client, ledger: store, config }),
      owner: 'test',
      leaseMs: 10_000,
      claimLimit: 100,
      concurrency: 1,
      maxItemAttempts: 3,
      pauseMs: 60_000,
    });
    const drain = () => delivery.run(new AbortController().signal, async () => (await store.outboxDepth('r')) === 0);

    await intake.accept(inputs());
    await drain();
    expect(emu.emulator.stats()).toMatchObject({ comments: 10, ai_units: 10 });

    // Within the retention window nothing goes; a day later everything delivered does, 3 at a time.
    const logger = createLogger({ level: 'silent' });
    let now = Date.now();
    const retention = createRetention({ store, retention: config.retention, logger, now: () => now });
    // Their threads (dated 2024, older than threads_s) stay while their items do.
    expect(await retention.runOnce()).toMatchObject({ delivered: 0, threads: 0 });
    now += DAY;
    expect(await retention.runOnce()).toMatchObject({ delivered: 10, dead: 0, threads: 10 });
    expect(await store.outboxCounts()).toEqual([]);

    // Read again (a re-run import, a UIDVALIDITY change): stored again, delivered as unchanged, nothing billed.
    await intake.accept(inputs());
    expect(await store.outboxDepth('r')).toBe(10);
    await drain();
    expect(emu.emulator.stats()).toMatchObject({ comments: 10, ai_units: 10 });
    expect(await store.outboxCounts()).toEqual([{ route: 'r', status: 'delivered', count: 10 }]);
    expect((await store.counters())[0]).toMatchObject({ delivered: 10, unchanged: 10, aiUnits: 10 });
  });

  it('walks the thread index a bounded number of steps a round and carries on where it stopped', async () => {
    const store = await openStore('sqlite::memory:');
    cleanup.push(() => store.close());
    const old = new Date(Date.UTC(2024, 0, 1)).toISOString();
    const recent = new Date().toISOString();
    const threads = (n: number, timestamp: string, tag: string) =>
      Array.from({ length: n }, (_, i) => ({ commentId: `${tag}${i}`, threadId: `${tag}-t${i}`, timestamp, participants: [] }));
    // Batches of 3: one round looks at 3 × THREAD_STEPS_PER_ROUND threads at most.
    const perRound = 3 * THREAD_STEPS_PER_ROUND;
    await store.indexThread('acme/kept', [...threads(perRound + 5, old, 'a'), ...threads(4, recent, 'z')]);
    const retention = createRetention({ store, retention: config.retention, logger: createLogger({ level: 'silent' }) });
    expect((await retention.runOnce()).threads).toBe(perRound);
    expect((await retention.runOnce()).threads).toBe(5);
    // The walk reached the end and starts again: nothing old is left, the recent threads stay.
    expect((await retention.runOnce()).threads).toBe(0);
    expect((await store.threadMembers('acme/kept', ['z-t0', 'z-t3', 'a-t0'])).size).toBe(2);
    // threads_s: null keeps them all.
    await store.indexThread('acme/kept', threads(3, old, 'b'));
    const keep = createRetention({ store, retention: { ...config.retention, threads_s: null }, logger: createLogger({ level: 'silent' }) });
    expect((await keep.runOnce()).threads).toBe(0);
    expect((await store.threadMembers('acme/kept', ['b-t0', 'b-t1', 'b-t2'])).size).toBe(3);
  });

  it("prunes the wake board's signals an hour after they were last written (one per notified mailbox), nothing else", async () => {
    const store = await openStore('sqlite::memory:');
    cleanup.push(() => store.close());
    const board = createWakeBoard(store);
    await board.signal('graph:m365/one@contoso.test');
    await board.signal('gmail:workspace/two@example.test');
    await store.setCheckpoint('graph:m365/one@contoso.test:inbox', { deltaLink: 'x' });
    const logger = createLogger({ level: 'silent' });
    let now = Date.now();
    const retention = createRetention({ store, retention: config.retention, logger, now: () => now });
    expect((await retention.runOnce()).wakeSignals).toBe(0);
    expect(await board.watch('graph:m365/one@contoso.test')).toBeDefined();
    now += WAKE_KEEP_MS + 60_000;
    expect((await retention.runOnce()).wakeSignals).toBe(2);
    expect(await board.watch('graph:m365/one@contoso.test')).toBeUndefined();
    expect(await board.watch('gmail:workspace/two@example.test')).toBeUndefined();
    expect(await store.getCheckpoint('graph:m365/one@contoso.test:inbox')).toEqual({ deltaLink: 'x' });
  });

  it('prunes a parse-attempt count left behind once parse_attempts_s passed since it was last counted (null keeps it)', async () => {
    const store = await openStore('sqlite::memory:');
    cleanup.push(() => store.close());
    // A process stopped between counting these and forgetting them (or they are poison messages').
    await store.countParseAttempts('r', ['left-1', 'left-2']);
    const logger = createLogger({ level: 'silent' });
    let now = Date.now();
    const retention = createRetention({ store, retention: config.retention, logger, now: () => now });
    expect((await retention.runOnce()).parseAttempts).toBe(0);
    now += config.retention.parse_attempts_s! * 1000 - 60_000;
    expect((await retention.runOnce()).parseAttempts).toBe(0);
    const keep = createRetention({ store, retention: { ...config.retention, parse_attempts_s: null }, logger, now: () => now + DAY });
    expect((await keep.runOnce()).parseAttempts).toBe(0);
    expect((await store.parseAttempts('r', ['left-1', 'left-2'])).size).toBe(2);
    now += 120_000;
    expect((await retention.runOnce()).parseAttempts).toBe(2);
    expect((await store.parseAttempts('r', ['left-1', 'left-2'])).size).toBe(0);
  });

  it("does not prune at the start: the first round waits, so a mailbox's first sync never waits for its checkpoint", async () => {
    const store = await openStore('sqlite::memory:');
    cleanup.push(() => store.close());
    const rounds: string[] = [];
    const watched = new Proxy(store, {
      get: (t, key) => {
        const v = Reflect.get(t, key, t) as unknown;
        return typeof v === 'function'
          ? (...a: unknown[]) => (rounds.push(String(key)), (v as (...x: unknown[]) => unknown).apply(t, a))
          : v;
      },
    });
    const retention = createRetention({ store: watched, retention: config.retention, logger: createLogger({ level: 'silent' }) });
    const stop = new AbortController();
    const running = retention.run(stop.signal);
    await new Promise((r) => setTimeout(r, 50));
    stop.abort();
    await running;
    expect(rounds).toEqual([]);
    // A round run on purpose still works at once.
    await retention.runOnce();
    expect(rounds).toContain('pruneBatch');
  });
});
