/**
 * `mailgate serve`: the runtime (store, API client or built-in emulator, parse pool, intake,
 * delivery, prediction sinks, adapters and their after-delivery actions) with the serve-only
 * pieces: metrics, logs and the console's live updates listening to its event stream, and the
 * HTTP server (probes, metrics, admin API, console, preview, push endpoints). `stop()` stops intake, drains delivery within a bound and closes
 * everything; docs/service.md describes the behaviour.
 */
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { createMetrics, type Metrics } from '../metrics.js';
import type { AfterDeliveryQueue } from '../pipeline/after-delivery.js';
import type { DeliveryLoop } from '../pipeline/delivery/index.js';
import { RuntimeEvents } from '../pipeline/events.js';
import { createRetention, type Retention } from '../pipeline/retention.js';
import { ParsePool } from '../pipeline/pool.js';
import { sleep } from '../pipeline/sleep.js';
import { createRuntime, logPauses, OpenParts, readsMailboxes, type AdapterEntry, type Runtime } from '../runtime/index.js';
import { buildApp } from '../server/app.js';
import { baseUrl, listenError, parseListen } from '../server/listen.js';
import type { PredictionSinks } from '../sinks/index.js';
import { createConsole } from './console.js';
import { createServiceDeps } from './deps.js';
import { countApiAttempts, countMessages, logDelivery, observeStore, trackPausedRoutes, watchStoreSpace } from './observe.js';

export { embeddedConfig, packageRoot, samplePaths, SAMPLES_ROUTE, SAMPLES_SOURCE } from './defaults.js';

export interface ServiceOptions {
  logger: Logger;
  metrics?: Metrics;
  /** Identifies this process in outbox claims. */
  owner?: string;
  /** Outbox claim lease in ms (default `CLAIM_LEASE_MS`, src/limits.ts). */
  leaseMs?: number;
  /** Internal, for tests only: the parse workers' test hooks (RuntimeOptions.parseTestHooks). */
  parseTestHooks?: boolean;
}

export interface Service {
  /** Base URL of the HTTP server, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  /** Base URL of the public listener (`server.public_listen`), when there is one. */
  readonly publicUrl?: string;
  /** Set when the built-in emulator is the API. */
  readonly emulatorUrl?: string;
  readonly runtime: Runtime;
  readonly adapters: readonly AdapterEntry[];
  readonly delivery: DeliveryLoop;
  /** The JSONL/webhook workers of predict routes with a `sink` (docs/predictions.md). */
  readonly sinks: PredictionSinks;
  readonly actions?: AfterDeliveryQueue;
  /** Pruning by age (`retention:`), running every `retention.interval_s`; `runOnce` prunes now. */
  readonly retention: Retention;
  /** Graceful stop; `force` aborts the drain. Resolves with whether the outbox was drained. Idempotent. */
  stop(force?: AbortSignal): Promise<{ drained: boolean }>;
  /**
   * While stop() runs: what it is still waiting for, e.g. `adapter smtp:mx`, `http server`,
   * `store` (empty before and after). `mailgate serve` names them when a stop outlasts its bound.
   */
  openParts(): string[];
}

/**
 * The preview endpoints' pool: one worker, one message at a time, as many waiting as previews
 * may run, each message within the preview body limit and the parse time budget.
 */
function newPreviewPool(config: Readonly<Config>): ParsePool {
  const { parsing, server } = config;
  return new ParsePool({
    size: 1,
    batchSize: 1,
    queueSize: server.preview.max_concurrent,
    timeoutMs: parsing.timeout_ms,
    maxMessageBytes: Math.min(parsing.max_message_bytes, server.preview.max_body_bytes),
  });
}

export async function startService(config: Readonly<Config>, options: ServiceOptions): Promise<Service> {
  const logger = options.logger;
  const drainMs = config.delivery.drain_ms;
  const { host, port } = parseListen(config.server.listen);
  const metrics = options.metrics ?? createMetrics();
  const intakeStop = new AbortController();
  const deliveryStop = new AbortController();
  // Listening before the runtime starts: the built-in emulator's first API calls are counted too.
  const events = new RuntimeEvents();
  countMessages(events, metrics);
  countApiAttempts(events, metrics);
  trackPausedRoutes(
    events,
    metrics,
    config.routes.map((r) => r.name),
  );
  logDelivery(events, logger.child({ component: 'delivery' }));
  logPauses(events, logger);
  const runtime = await createRuntime({
    config,
    logger,
    events,
    // Replicas sharing the store split the mailboxes: each pull adapter runs under a lease.
    ownership: true,
    // The parse workers would idle until the mailboxes are connected: they warm up meanwhile.
    warmParser: true,
    // Reading mailboxes, the event loop is the bottleneck and each write covers many messages:
    // a commit's WAL sync runs on the thread pool while the loop reads the next chunk, hands
    // messages to the parse workers and delivers. Each write still answers (a checkpoint moves,
    // an item is sent, a sender gets its answer) only once it is durable.
    storeOptions: { sqlite: { syncOffThread: readsMailboxes(config) } },
    signal: intakeStop.signal,
    deliverySignal: deliveryStop.signal,
    ...(options.owner ? { owner: options.owner } : {}),
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    ...(options.parseTestHooks === true ? { parseTestHooks: true } : {}),
  });
  const { store, routes, delivery, sinks, actions } = runtime;
  observeStore(metrics, store, runtime.adapters, routes.keys());
  const consoleData = createConsole({
    store,
    routes,
    adapters: runtime.adapters,
    logger: logger.child({ component: 'console' }),
    events,
  });

  let stopping = false;
  const { pool, adapters } = runtime;
  let previewPool: ParsePool | undefined;
  const deps = createServiceDeps({
    config,
    store,
    pool,
    routes,
    adapters,
    metrics,
    logger,
    events,
    stopping: () => stopping,
    pauses: runtime.pauses,
    resumeRoute: (route) => runtime.delivery.resume(route),
    previewPool: () => (previewPool ??= newPreviewPool(config)),
  });
  deps.push = { endpoints: runtime.endpoints() };
  deps.console = consoleData.deps;
  const { listen: _listen, public_listen: publicListen, stop_timeout_ms: _stopTimeoutMs, ...server } = config.server;
  const app = buildApp({ ...server, listen_host: host }, deps);
  const publicAt = publicListen === undefined ? undefined : parseListen(publicListen);
  const publicApp = publicAt && buildApp({ ...server, listen_host: publicAt.host, role: 'public' }, deps);
  for (const [server, at, key] of [
    [app, { host, port }, 'server.listen'],
    [publicApp, publicAt, 'server.public_listen'],
  ] as const) {
    try {
      if (server && at) await server.listen(at);
    } catch (err) {
      await app.close();
      await runtime.close();
      throw key === 'server.listen'
        ? listenError(err, at!.host, at!.port)
        : listenError(err, at!.host, at!.port, `Set ${key} in the configuration to another host:port`);
    }
  }
  const url = baseUrl(app.server.address() as AddressInfo);
  const publicUrl = publicApp && baseUrl(publicApp.server.address() as AddressInfo);
  const adaptersDone = runtime.runAdapters(intakeStop.signal);
  const deliveryDone = delivery.run(deliveryStop.signal);
  const retentionStop = new AbortController();
  const retention = createRetention({ store, retention: config.retention, logger: logger.child({ component: 'retention' }) });
  const retentionDone = retention.run(retentionStop.signal);
  const stopWatch = watchStoreSpace(store, logger.child({ component: 'store' }));
  sinks.start();
  if (publicUrl) logger.info({ url: publicUrl }, `push endpoints and /livez also on ${publicUrl}`);
  logger.info({ url, routes: [...routes.keys()], adapters: adapters.map((e) => `${e.kind}:${e.name}`) }, `mailgate serving on ${url}`);

  const parts = new OpenParts();
  // The adapters still running while intake stops, by name (an SMTP listener letting its clients finish).
  const openParts = () =>
    parts.list().flatMap((p) => {
      if (p !== 'adapters') return [p];
      const running = adapters.filter((e) => e.state === 'running').map((e) => `adapter ${e.kind}:${e.name}`);
      return running.length > 0 ? running : [p];
    });

  async function stop(force?: AbortSignal): Promise<{ drained: boolean }> {
    stopping = true;
    logger.info({ drainMs }, 'stopping: intake first, then draining delivery');
    retentionStop.abort();
    stopWatch();
    intakeStop.abort();
    await parts.wait('retention', retentionDone);
    await parts.wait('adapters', adaptersDone);
    const deadline = AbortSignal.any([AbortSignal.timeout(Math.max(drainMs, 1)), ...(force ? [force] : [])]);
    let drained = false;
    // A paused route cannot deliver (the API refused it): its items are not waited for.
    const deliverable = async () => {
      let n = 0;
      for (const route of routes.keys()) if (runtime.pauses.get(route) === undefined) n += await store.outboxDepth(route);
      return n;
    };
    await parts.wait('delivery drain', async () => {
      while (!deadline.aborted && drainMs > 0) {
        if ((await deliverable()) === 0) {
          drained = (await store.outboxDepth()) === 0;
          break;
        }
        await sleep(100, deadline);
      }
      for (const p of runtime.pauses.list())
        logger.warn(
          { route: p.route, code: p.code, since: p.since.toISOString(), queued: await store.outboxDepth(p.route).catch(() => -1) },
          `route ${p.route} is paused (${p.code}): not waiting for it; its queued items stay for the next start`,
        );
      // Nothing waited for (drain_ms 0) or the bound passed: an empty outbox is drained all the same.
      const queued = drained ? 0 : await store.outboxDepth().catch(() => -1);
      if (queued === 0) drained = true;
      else if (runtime.pauses.list().length === 0)
        logger.warn(
          { code: 'MAILGATE_ERR_SERVICE_DRAIN_TIMEOUT', queued },
          'stopped waiting for delivery; queued items stay for the next start',
        );
    });
    await parts.wait('after-delivery actions', async () =>
      actions?.close(deadline.aborted ? AbortSignal.abort() : AbortSignal.any([AbortSignal.timeout(10_000), ...(force ? [force] : [])])),
    );
    deliveryStop.abort();
    await parts.wait('delivery', deliveryDone);
    // After the drain: what delivery saved goes out to the sinks within what is left of the bound.
    await parts.wait('prediction sinks', async () => {
      await sinks.flush(deadline);
      await sinks.close();
    });
    await parts.wait('http server', app.close());
    await parts.wait('public http server', async () => publicApp?.close());
    consoleData.bus.close();
    await parts.wait('preview pool', async () => previewPool?.close());
    await runtime.close(parts);
    logger.info({ drained }, 'mailgate stopped');
    return { drained };
  }

  let stopped: Promise<{ drained: boolean }> | undefined;
  return {
    url,
    ...(publicUrl ? { publicUrl } : {}),
    ...(runtime.emulatorUrl ? { emulatorUrl: runtime.emulatorUrl } : {}),
    runtime,
    adapters: runtime.adapters,
    delivery,
    sinks,
    retention,
    ...(actions ? { actions } : {}),
    stop: (force) => (stopped ??= stop(force)),
    openParts,
  };
}
