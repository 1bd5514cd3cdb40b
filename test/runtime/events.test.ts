/**
 * The runtime's event stream, over the compiled runtime, a real SQLite store and a real
 * emulator over HTTP: pull intake, push intake, delivery (a failure given up, a refusal that
 * pauses the route, a delivery, an unchanged text), replay and the adapters each report what
 * happened once, in order, with the item's id, route and adapter; a listener that throws or
 * rejects changes nothing the pipeline does.
 */
import { contentKey } from '../../src/pipeline/origin.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import type { RuntimeEventMap, RuntimeEventType } from '../../src/pipeline/events.js';
import type { Adapter, Inbound } from '../../src/pipeline/types.js';
import type { Runtime } from '../../src/runtime/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { message } from '../push/support.js';
import { ROOT } from '../service/serve-process.js';
import { fileOrigin } from '../../adapters/files/identity.js';

/** The compiled runtime: its parse pool needs the compiled worker (`npm run build` first). */
type RuntimeModule = typeof import('../../src/runtime/index.js');
const RUNTIME = pathToFileURL(join(ROOT, 'dist', 'src', 'runtime', 'index.js')).href;
const REPLAY = pathToFileURL(join(ROOT, 'dist', 'src', 'pipeline', 'replay.js')).href;

const TYPES: RuntimeEventType[] = [
  'item:stored',
  'item:delivered',
  'item:unchanged',
  'item:retrying',
  'item:dead',
  'item:replayed',
  'delivery:batch',
  'api:attempt',
  'route:paused',
  'route:resumed',
  'adapter:state',
];

type Seen = { [K in RuntimeEventType]: { type: K; event: RuntimeEventMap[K] } }[RuntimeEventType];

const dir = mkdtempSync(join(tmpdir(), 'mailgate-events-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function start(name: string, options: { adapters?: Adapter[]; throwing?: boolean } = {}) {
  const { createRuntime, RuntimeEvents } = (await import(RUNTIME)) as RuntimeModule;
  const emu: StartedEmulator = await startEmulator({ autoCreateSources: true });
  cleanup.push(() => emu.stop());
  const config = loadConfig({
    overrides: {
      store: `sqlite:${join(dir, `${name}.db`)}`,
      api: { url: emu.url, token: emu.token, retry: { max_attempts: 1 } },
      delivery: { max_item_attempts: 1 },
      routes: [{ name: 'support', source: 'acme/support' }],
    } as never,
  });
  const listenerErrors: string[] = [];
  const events = new RuntimeEvents({ onListenerError: (_err, type) => void listenerErrors.push(type) });
  const seen: Seen[] = [];
  for (const type of TYPES) {
    if (options.throwing === true) {
      events.on(type, () => {
        throw new Error(`a broken ${type} listener`);
      });
      events.on(type, async () => Promise.reject(new Error(`a rejecting ${type} listener`)));
    }
    events.on(type, (event) => void seen.push({ type, event } as Seen));
  }
  const rt: Runtime = await createRuntime({
    config,
    logger: createLogger(false),
    events,
    ...(options.adapters ? { adapters: options.adapters } : {}),
  });
  cleanup.push(() => rt.close());
  const of = <K extends RuntimeEventType>(type: K): Array<RuntimeEventMap[K]> =>
    seen.filter((s) => s.type === type).map((s) => s.event as RuntimeEventMap[K]);
  /** Delivers until the outbox is empty; returns the events of that run. */
  const deliver = async (): Promise<Seen[]> => {
    const from = seen.length;
    await rt.delivery.run(new AbortController().signal, async () => (await rt.store.outboxDepth()) === 0);
    return seen.slice(from);
  };
  return { rt, emu, seen, of, deliver, listenerErrors };
}

const pulled = (tag: string, index: number, extra: Partial<Inbound> = {}): Inbound => ({
  raw: message(tag),
  key: `files:/in.mbox:${index}`,
  route: 'support',
  receivedAt: new Date(),
  origin: fileOrigin('/in.mbox', index),
  ...extra,
});
const pushed = (tag: string): Inbound => ({
  raw: message(tag),
  key: contentKey(message(tag)),
  route: 'support',
  receivedAt: new Date(),
  origin: { adapter: 'webhook:raw', instance: 'hooks', id: contentKey(message(tag)), details: {} },
});
const kinds = (seen: Seen[]) => seen.map((s) => s.type).filter((t) => t !== 'api:attempt');

describe('runtime events', () => {
  it('report intake, push, delivery and replay once each, in order, with ids, route and adapter', async () => {
    const { rt, emu, of, seen, deliver } = await start('paths');
    // Pull intake: a message, the same message again in the same batch, one the adapter could not read.
    const failure = { code: 'MAILGATE_ERR_INPUT_TOO_LARGE', message: 'over the budget' };
    await rt.intake.accept([pulled('a', 1), pulled('a', 1), pulled('c', 2, { failure })]);
    expect(of('item:stored')).toEqual([
      { id: expect.any(Number), route: 'support', adapter: 'files', key: expect.any(String), outcome: 'queued', via: 'pull' },
      {
        id: of('item:stored')[0]!.id,
        route: 'support',
        adapter: 'files',
        key: of('item:stored')[0]!.key,
        outcome: 'duplicate',
        via: 'pull',
      },
      { id: expect.any(Number), route: 'support', adapter: 'files', key: expect.any(String), outcome: 'dead', via: 'pull', error: failure },
    ]);
    // Push intake: a message, then the provider's retry of it.
    const [first] = await rt.intake.accept([pushed('b')], { whenFull: 'refuse' });
    const [again] = await rt.intake.accept([pushed('b')], { whenFull: 'refuse' });
    const b = Number(first!.id);
    expect(again!.id).toBe(first!.id);
    expect(of('item:stored').slice(3)).toEqual([
      { id: b, route: 'support', adapter: 'webhook:raw', key: expect.any(String), outcome: 'queued', via: 'push' },
      { id: b, route: 'support', adapter: 'webhook:raw', key: expect.any(String), outcome: 'duplicate', via: 'push' },
    ]);

    // The API fails once: with one attempt allowed per item, both queued items are given up.
    emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', status: 503, times: 1 }]);
    const failed = await deliver();
    expect(kinds(failed)).toEqual(['item:dead', 'item:dead', 'delivery:batch']);
    const dead = of('item:dead');
    expect(dead.map((d) => [d.adapter, d.reason, d.code])).toEqual([
      ['files', 'attempts', 'MAILGATE_ERR_API_SERVER'],
      ['webhook:raw', 'attempts', 'MAILGATE_ERR_API_SERVER'],
    ]);
    expect(dead[1]!.id).toBe(b);
    expect(of('delivery:batch')).toEqual([
      { route: 'support', target: 'acme/support', delivered: 0, unchanged: 0, rejected: 2, retried: 0, aiUnits: 0, aiUnitsEstimated: 0 },
    ]);
    expect(
      of('api:attempt')
        .filter((a) => a.endpoint === 'sync-raw-emails')
        .map((a) => a.status),
    ).toEqual([503]);

    // Replayed from their kept bytes (the unreadable one too: its bytes parse now), then delivered.
    const letters = await rt.store.listDeadLetters({ limit: 10 });
    expect(letters).toHaveLength(3);
    const { replayDeadLetter } = (await import(REPLAY)) as typeof import('../../src/pipeline/replay.js');
    const ctx = { store: rt.store, pool: rt.pool, parsing: rt.config.parsing, events: rt.events };
    for (const l of [...letters].sort((x, y) => x.id - y.id)) {
      const detail = (await rt.store.getDeadLetter(l.id))!;
      await replayDeadLetter(ctx, rt.routes.get('support')!, { ...detail, raw: detail.raw! });
    }
    const ids = [...letters].map((l) => l.id).sort((x, y) => x - y);
    expect(of('item:replayed').map((r) => [r.id, r.state])).toEqual(ids.map((id) => [id, 'queued']));
    const delivered = await deliver();
    expect(kinds(delivered)).toEqual(['item:delivered', 'item:delivered', 'item:delivered', 'delivery:batch']);
    expect(of('item:delivered').map((d) => d.id)).toEqual(ids);
    expect(of('delivery:batch')[1]).toMatchObject({ delivered: 3, rejected: 0, aiUnits: 3 });

    // The same text read again from another file: the ledger knows it, nothing is billed.
    await rt.intake.accept([pulled('a', 1, { key: 'files:/other.mbox:1', origin: fileOrigin('/other.mbox', 1) })]);
    expect(kinds(await deliver())).toEqual(['item:unchanged', 'delivery:batch']);
    expect(of('item:unchanged')).toHaveLength(1);
    // Each item reached one end once: no id delivered twice, none both dead and delivered after its replay.
    expect(new Set(of('item:delivered').map((d) => d.id)).size).toBe(3);
    expect(seen.filter((s) => s.type === 'item:retrying')).toEqual([]);
  });

  it('report a refusal once as a pause with its code and since-when, the items kept for the next claim', async () => {
    const { rt, emu, of } = await start('pause');
    await rt.intake.accept([pulled('p', 1), pulled('q', 2)]);
    emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', status: 401 }]);
    const before = Date.now();
    const stop = new AbortController();
    const running = rt.delivery.run(stop.signal);
    while (of('delivery:batch').length === 0) await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    await running;
    expect(of('item:retrying').map((r) => [r.code, r.attempts, r.delayMs])).toEqual([
      ['MAILGATE_ERR_API_UNAUTHORIZED', 1, 0],
      ['MAILGATE_ERR_API_UNAUTHORIZED', 1, 0],
    ]);
    const [paused, ...more] = of('route:paused');
    expect(more).toEqual([]);
    expect(paused).toMatchObject({ route: 'support', target: 'acme/support', code: 'MAILGATE_ERR_API_UNAUTHORIZED', pauseMs: 60_000 });
    expect(paused!.since.getTime()).toBeGreaterThanOrEqual(before);
    expect(paused!.until.getTime() - paused!.since.getTime()).toBe(60_000);
    expect(of('item:dead')).toEqual([]);
    expect(await rt.store.outboxDepth('support')).toBe(2);
  });

  it('report each adapter state change', async () => {
    const adapter: Adapter = { kind: 'probe', name: 'one', mode: 'pull', start: async () => undefined };
    const failing: Adapter = {
      kind: 'probe',
      name: 'two',
      mode: 'pull',
      start: async () => Promise.reject(new Error('no mailbox')),
    };
    const { rt, of } = await start('adapters', { adapters: [adapter, failing] });
    await rt.runAdapters(new AbortController().signal);
    expect(of('adapter:state').map((s) => [s.name, s.state])).toEqual([
      ['one', 'running'],
      ['two', 'running'],
      ['one', 'finished'],
      ['two', 'failed'],
    ]);
    expect(of('adapter:state')[3]!.error).toEqual({ code: 'MAILGATE_ERR_SERVICE_ADAPTER_FAILED', message: 'no mailbox' });
  });

  it('a listener that throws or rejects breaks nothing: every item is stored and delivered, the failures reported', async () => {
    const { rt, of, deliver, listenerErrors } = await start('throwing', { throwing: true });
    await rt.intake.accept([pulled('t', 1), pulled('u', 2)]);
    await rt.intake.accept([pushed('v')], { whenFull: 'refuse' });
    await deliver();
    expect(of('item:stored').map((s) => s.outcome)).toEqual(['queued', 'queued', 'queued']);
    expect(of('item:delivered')).toHaveLength(3);
    expect(await rt.store.outboxDepth()).toBe(0);
    expect((await rt.store.counters('support'))[0]).toMatchObject({ delivered: 3 });
    // Rejections are reported a turn later.
    await new Promise((r) => setImmediate(r));
    for (const type of ['item:stored', 'item:delivered', 'delivery:batch', 'api:attempt'] as const)
      expect(listenerErrors.filter((t) => t === type).length).toBe(2 * of(type).length);
  });
});
