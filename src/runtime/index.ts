/**
 * The runtime shared by `mailgate serve`, `mailgate import`, `mailgate dlq replay` and the
 * library: the store, the API client (or the built-in emulator when `api.url` is absent), the
 * parse pool, intake, one delivery loop (one owner string), the prediction sinks, the adapters
 * of the configuration (through the registry), their after-delivery actions and the push sink,
 * wired once from one validated configuration. The caller runs what it needs:
 * `runtime.runAdapters(sink, signal)` beside `runtime.delivery.run(signal)`; serve-only pieces
 * (HTTP server, metrics, signals, drain) hook in through the options.
 */
import { CLAIM_LEASE_BOUNDS, CLAIM_LEASE_MS, parseLimit } from '../limits.js';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ApiClient } from '../api/client.js';
import type { Config, RouteConfig } from '../config/schema.js';
import { createLogger, type Logger } from '../logger.js';
import { createAfterDeliveryQueue, type AfterDeliveryQueue } from '../pipeline/after-delivery.js';
import { checkRoutes, createDeliverFn, createDelivery, type DeliveryLoop } from '../pipeline/delivery/index.js';
import { RoutePauses } from './pauses.js';
import { poisonGuard } from '../pipeline/poison.js';
import { RuntimeEvents } from '../pipeline/events.js';
import { createIntake, type IntakeCore } from '../pipeline/intake.js';
import { ParsePool } from '../pipeline/pool.js';
import type { Adapter, FilteredReport, Intake, PushEndpoint } from '../pipeline/types.js';
import { createPredictionSinks, type PredictionSinks } from '../sinks/index.js';
import { openStore, type OpenStoreOptions } from '../store/index.js';
import type { Store } from '../store/types.js';
import { actionTarget } from './actions.js';
import { buildAdapters, entryOf, runAdapters, type AdapterEntry } from './adapters.js';
import { apiEndpoint, type ApiEndpoint } from './api.js';
import { startOwner, type OwnerHandle } from './owner.js';
import { MailboxGuard } from './mailboxes.js';
import { OpenParts } from './open-parts.js';
import { wakeDelivery } from './wake-delivery.js';
import { leaseGroup, leaseName, Ownership } from './ownership.js';

export { emulatorDataDir } from './api.js';
export { OpenParts } from './open-parts.js';
export type { AdapterEntry, AdapterState } from './adapters.js';
export { readsMailboxes } from './adapters.js';
export { RuntimeEvents, type RuntimeEventMap, type RuntimeEventType } from '../pipeline/events.js';

export interface RuntimeOptions {
  config: Readonly<Config>;
  /** Default: pino at `config.log_level`, on stderr. */
  logger?: Logger;
  /** Identifies this process in outbox claims. Default `<hostname>:<pid>:<random>`. */
  owner?: string;
  /** Nothing is sent and no emulator is started; the client points nowhere. */
  dryRun?: boolean;
  /** How the store is opened beside its URL (e.g. `mailgate import` syncs SQLite commits off the event loop). */
  storeOptions?: OpenStoreOptions;
  /**
   * Outbox claim lease in ms (default `CLAIM_LEASE_MS`, within `CLAIM_LEASE_BOUNDS`, src/limits.ts). A process that dies stops its heartbeat: its
   * claims are released by the next process of its host at once, by any other after a few
   * heartbeats (runtime/owner.ts); the lease bounds the wait only for unregistered owners.
   */
  leaseMs?: number;
  /** Heartbeat interval of this process as a registered owner, in ms. Default `delivery.heartbeat_ms`. */
  heartbeatMs?: number;
  /**
   * Run pull adapters (IMAP accounts, files drops) under mailbox leases, each on one live replica
   * of those sharing the store (runtime/ownership.ts; `mailgate serve`). Default false: every
   * adapter runs here (`mailgate import`, the library).
   */
  ownership?: boolean;
  /**
   * The adapters to run. Default: one per entry of the configuration's `adapters:`, built
   * through the registry (adapters/index.ts).
   */
  adapters?: readonly Adapter[];
  /**
   * The event stream the runtime emits on (`runtime.events`), made by the caller so that its
   * listeners (metrics, progress, logs) hear everything from the start, the built-in emulator's
   * first API calls included; the caller's listeners then do all the observing. Default: a new
   * stream on which the runtime logs each route's pause and resume.
   */
  events?: RuntimeEvents;
  /** Aborts intake's backpressure waits; also delivery's requests unless `deliverySignal` is given. */
  signal?: AbortSignal;
  /** Aborts the requests of delivery (with their retries). Default: `signal`. */
  deliverySignal?: AbortSignal;
  /**
   * Internal, for tests only: parse workers honour `X-Mailgate-Internal-Test-Hook: crash|hang`
   * (src/pipeline/worker.ts), so a test can stand in for a message that kills its worker or hangs.
   */
  parseTestHooks?: boolean;
  /**
   * The parse workers warm up on sample messages while they wait for their first real ones
   * (ParsePoolOptions.warmUp). Default false; `mailgate serve` sets it: its workers start before
   * its mailboxes are connected, and idle until then.
   */
  warmParser?: boolean;
}

export interface Runtime {
  config: Readonly<Config>;
  logger: Logger;
  /** What intake, push intake, delivery, replay, the API client and the adapters report (src/pipeline/events.ts). */
  events: RuntimeEvents;
  store: Store;
  client: ApiClient;
  pool: ParsePool;
  /** The one intake door every adapter gets in `start()`, pull and push alike. */
  intake: IntakeCore;
  /** The one delivery loop of this process; woken by every stored intake batch. */
  delivery: DeliveryLoop;
  /** The owner string of this process's outbox claims. */
  owner: string;
  routes: Map<string, RouteConfig>;
  /** The adapters with their run state. */
  adapters: AdapterEntry[];
  /** The JSONL/webhook workers of predict routes with a `sink` (docs/predictions.md); started by the caller. */
  sinks: PredictionSinks;
  /** After-delivery actions of the adapters that have them (IMAP seen/flag/move); woken by delivery. */
  actions?: AfterDeliveryQueue;
  /** Every adapter's push endpoints, for the HTTP server to mount. */
  endpoints(): PushEndpoint[];
  /**
   * Starts every adapter on `intake` (default: the runtime's); resolves when all have returned. With
   * `ownership`, pull adapters run while this process holds their lease, and their leases are
   * released once they have stopped.
   */
  runAdapters(signal: AbortSignal, intake?: Intake): Promise<void>;
  /** Set when the built-in emulator serves as the API (no `api.url`). */
  emulatorUrl?: string;
  /** The routes that cannot deliver right now (paused after the API refused them), from the events. */
  pauses: RoutePauses;
  /** Mailbox states: which mailboxes run, filtered counts (src/runtime/mailboxes.ts). */
  mailboxes: MailboxGuard;
  /** Closes everything the runtime opened; `parts` names each piece while it closes. */
  close(parts?: OpenParts): Promise<void>;
}

/** Items claimed per delivery batch at most: bounds the documents delivery holds (× concurrency per route). */
const MAX_CLAIM_ITEMS = 1_000;

function defaultOwner(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

interface Core {
  store: Store;
  pauses: RoutePauses;
  mailboxes: MailboxGuard;
  routes: Map<string, RouteConfig>;
  api: ApiEndpoint;
  pool: ParsePool;
  logger: Logger;
  events: RuntimeEvents;
  owner: string;
  leaseMs: number;
  ownerHandle?: OwnerHandle;
  ownership?: Ownership;
}

function buildIntake(options: RuntimeOptions, c: Core): IntakeCore {
  const p = options.config.parsing;
  return createIntake({
    store: c.store,
    routes: c.routes,
    parse: (raw, opts, how) => c.pool.parseEncoded(raw, opts, how),
    parsing: { body: p.body, headers: p.headers, maxMessageBytes: p.max_message_bytes },
    maxOutbox: options.config.delivery.max_outbox,
    ...(options.signal ? { signal: options.signal } : {}),
    logger: c.logger,
    events: c.events,
    poison: poisonGuard(c.store, p.poison_after),
  });
}

function buildDelivery(options: RuntimeOptions, c: Core, actions: () => AfterDeliveryQueue | undefined): DeliveryLoop {
  const { config } = options;
  const signal = options.deliverySignal ?? options.signal;
  // The signal ends requests in flight (and their retry waits): an interrupted import stops at
  // once, its items stay queued for the next run.
  const dryRun = options.dryRun === true;
  const deliver = createDeliverFn({ client: c.api.client, ledger: c.store, config, dryRun, ...(signal ? { signal } : {}) });
  return createDelivery({
    store: c.store,
    routes: [...c.routes.values()],
    deliver,
    owner: c.owner,
    leaseMs: c.leaseMs,
    claimLimit: Math.min(MAX_CLAIM_ITEMS, config.delivery.max_documents),
    concurrency: config.delivery.concurrency,
    maxItemAttempts: config.delivery.max_item_attempts,
    flushMs: config.delivery.flush_ms,
    onError: (err, route) => c.logger.error({ err, route: route.name }, 'delivery failed'),
    events: c.events,
    pauses: c.pauses,
    async onDelivered() {
      actions()?.wake();
    },
  });
}

/** Log lines for each route's pause (an error: the API refused its credentials, target or requests) and resume. */
export function logPauses(events: RuntimeEvents, logger: Logger): RuntimeEvents {
  events.on('route:paused', (e) =>
    logger.error(
      { route: e.route, target: e.target, code: e.code, pauseMs: e.pauseMs, since: e.since.toISOString() },
      `route ${e.route} (${e.target}) paused for ${Math.round(e.pauseMs / 1000)} s: ${e.message}`,
    ),
  );
  events.on('route:resumed', (e) => logger.info({ route: e.route, target: e.target, pausedMs: e.pausedMs }, `route ${e.route} resumed`));
  return events;
}

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config } = options;
  const logger = options.logger ?? createLogger({ level: config.log_level, destination: process.stderr });
  const routes = new Map(config.routes.map((r) => [r.name, r]));
  checkRoutes(routes.values());
  const leaseMs = parseLimit('leaseMs', options.leaseMs, CLAIM_LEASE_MS, CLAIM_LEASE_BOUNDS);
  const events = options.events ?? logPauses(new RuntimeEvents(), logger);
  events.onListenerError ??= (err, type) => logger.warn({ err, event: type }, 'a runtime event listener failed');
  // First: its workers load their modules (and warm up) while this thread opens the store.
  const p = config.parsing;
  const pool = new ParsePool({
    ...(p.workers === undefined ? {} : { size: p.workers }),
    timeoutMs: p.timeout_ms,
    maxMessageBytes: p.max_message_bytes,
    ...(options.parseTestHooks === true ? { testHooks: true } : {}),
    ...(options.warmParser === true ? { warmUp: true } : {}),
  });
  const store = await openStore(config.store, options.storeOptions).catch(async (err: unknown) => {
    await pool.close();
    throw err;
  });
  let api: ApiEndpoint | undefined;
  try {
    // Built after the store opens: notified kinds wake the replica reading a mailbox through it.
    const adapters = options.adapters ? options.adapters.map(entryOf) : await buildAdapters(config, logger, store);
    api = await apiEndpoint(config, logger, options.dryRun === true, (info) => events.emit('api:attempt', info));
    const pauses = new RoutePauses(events, store);
    const mailboxes = new MailboxGuard({ store, events, logger, checkMs: config.mailboxes.check_ms });
    const core: Core = { store, pauses, mailboxes, routes, api, pool, logger, events, owner: options.owner ?? defaultOwner(), leaseMs };
    let actions: AfterDeliveryQueue | undefined;
    const delivery = buildDelivery(options, core, () => actions);
    const intake = buildIntake(options, core);
    wakeDelivery(events, delivery);
    const target = actionTarget(adapters.map((e) => e.adapter));
    if (target) actions = createAfterDeliveryQueue(target, store, logger.child({ component: 'after-delivery' }));
    for (const e of adapters) e.adapter.onActionsReady?.(() => actions?.wake());
    const sinks = createPredictionSinks({ store, routes: routes.values(), logger });
    delivery.onPredictionsSaved((route) => sinks.notify(route));
    // Registered before the first claim, which then finds the claims of dead owners released.
    // A dry run claims nothing and writes nothing.
    if (options.dryRun !== true) {
      const heartbeatMs = options.heartbeatMs ?? config.delivery.heartbeat_ms;
      const leased = options.ownership === true ? adapters.filter((e) => leaseName(e) !== undefined) : [];
      const group = leased.length > 0 ? leaseGroup(leased.map((e) => leaseName(e)!)) : undefined;
      const ownerLog = logger.child({ component: 'owner' });
      core.ownerHandle = await startOwner({ store, id: core.owner, heartbeatMs, logger: ownerLog, ...(group ? { group } : {}) });
      if (group !== undefined) {
        const { ttl_ms: ttlMs, renew_ms: renewMs } = config.leases;
        core.ownership = new Ownership(leased, {
          store,
          owner: core.owner,
          group,
          ttlMs,
          renewMs,
          logger,
          events,
          mailboxes: core.mailboxes,
        });
      }
    }
    return assemble({ config, core, intake, delivery, adapters, sinks, ...(actions ? { actions } : {}) });
  } catch (err) {
    await pool.close();
    await api?.stop?.();
    await store.close();
    throw err;
  }
}

interface Parts {
  config: Readonly<Config>;
  core: Core;
  intake: IntakeCore;
  delivery: DeliveryLoop;
  adapters: AdapterEntry[];
  sinks: PredictionSinks;
  actions?: AfterDeliveryQueue;
}

/** close() of the queue and of the sinks may be called by the caller's drain and again by runtime.close(). */
function closingOnce<T extends { close(signal?: AbortSignal): Promise<void> }>(target: T): T {
  let closing: Promise<void> | undefined;
  const close = (signal?: AbortSignal) => (closing ??= target.close(signal));
  return new Proxy(target, { get: (t, key) => (key === 'close' ? close : Reflect.get(t, key, t)) });
}

function assemble(parts: Parts): Runtime {
  const { core } = parts;
  const actions = parts.actions ? closingOnce(parts.actions) : undefined;
  const sinks = closingOnce(parts.sinks);
  let closed = false;
  const runtime: Runtime = {
    config: parts.config,
    logger: core.logger,
    events: core.events,
    pauses: core.pauses,
    mailboxes: core.mailboxes,
    store: core.store,
    client: core.api.client,
    pool: core.pool,
    intake: parts.intake,
    delivery: parts.delivery,
    owner: core.owner,
    routes: core.routes,
    adapters: parts.adapters,
    sinks,
    ...(actions ? { actions } : {}),
    endpoints: () => parts.adapters.flatMap((e) => e.adapter.endpoints?.() ?? []),
    runAdapters: async (signal, intake = parts.intake) => {
      // What a mailbox's filter leaves out is counted (metrics, status, console).
      const adapterSink: Intake = {
        accept: intake.accept.bind(intake),
        checkpoint: intake.checkpoint.bind(intake),
        item: intake.item.bind(intake),
        filtered: (r: FilteredReport) => core.mailboxes.filtered(r),
      };
      const { ownership, ownerHandle } = core;
      const run = { logger: core.logger, events: core.events, mailboxes: core.mailboxes };
      if (ownership === undefined) return runAdapters(parts.adapters, adapterSink, signal, run);
      const free = parts.adapters.filter((e) => leaseName(e) === undefined);
      // Stopping: leave the group first, so that the other replicas take the mailboxes as soon as they are released.
      const leaving = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })).then(() =>
        ownerHandle?.leaveGroup().catch((err: unknown) => core.logger.warn({ err }, 'leaving the replica group failed')),
      );
      await Promise.all([runAdapters(free, adapterSink, signal, run), ownership.run(adapterSink, signal, leaving)]);
    },
    async close(parts = new OpenParts()) {
      if (closed) return;
      closed = true;
      // Nothing parses any more: the parse workers stop while the rest lets go of the store (a
      // worker's end waits for its thread, which needs neither the store nor this thread).
      const workers = parts.wait('parse workers', core.pool.close());
      workers.catch(() => undefined);
      await parts.wait('mailbox states', core.mailboxes.flush());
      // Actions still due stay in the store for the next start.
      await parts.wait('after-delivery actions', async () => actions?.close(AbortSignal.abort()));
      await parts.wait('prediction sinks', sinks.close());
      await parts.wait(core.api.emulatorUrl === undefined ? 'api client' : 'built-in emulator', async () => core.api.stop?.());
      // Deregistering releases what this process still holds: the next one claims it at once.
      await parts.wait('owner registration', async () =>
        core.ownerHandle?.stop().catch((err: unknown) => core.logger.warn({ err }, 'deregistering the owner failed')),
      );
      await parts.wait('store', core.store.close());
      await workers;
    },
  };
  if (core.api.emulatorUrl !== undefined) runtime.emulatorUrl = core.api.emulatorUrl;
  return runtime;
}
