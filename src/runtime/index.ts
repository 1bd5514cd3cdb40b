/**
 * The runtime shared by `mailgate import`, `mailgate serve` and `mailgate dlq replay`: the
 * store, the API client (or the built-in emulator when `api.url` is absent), the parse pool,
 * intake and delivery, wired from one validated configuration. Adapters are started by the
 * caller: `adapter.start(runtime.intake, signal)` beside `runtime.delivery.run(signal)`.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createApiClient, type ApiClient, type AttemptInfo } from '../api/client.js';
import type { Config, RouteConfig } from '../config/schema.js';
import { DEFAULT_TRANSFORM_TAG } from '../limits.js';
import { GatewayError } from '../errors.js';
import { createLogger, type Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { createDeliverFn, checkRoutes } from '../pipeline/deliver-fn.js';
import { createDelivery, type DeliveryLoop, type DeliveryOptions } from '../pipeline/delivery.js';
import { createIntake, type Intake, type IntakeOptions } from '../pipeline/intake.js';
import { routeTarget } from '../pipeline/origin.js';
import { ParsePool } from '../pipeline/pool.js';

export interface RuntimeOptions {
  config: Readonly<Config>;
  /** Default: pino at `config.log_level`, on stderr. */
  logger?: Logger;
  /** Kept on the runtime for the caller; intake and delivery report through onIntakeBatch/onDeliveryBatch. */
  metrics?: Metrics;
  /** Identifies this process in outbox claims. Default `<hostname>:<pid>:<random>`. */
  owner?: string;
  /** Nothing is sent and no emulator is started; the client points nowhere. */
  dryRun?: boolean;
  /** Outbox claim lease in ms (default 60000). A killed process's claims free up after it. */
  leaseMs?: number;
  /** Passed to intake and delivery (progress, metrics). */
  onIntakeBatch?: IntakeOptions['onBatch'];
  onDeliveryBatch?: DeliveryOptions['onBatch'];
  /** Called when a route is paused because the API refused the credentials or the target (401/403/404). Default: an error log line. */
  onPause?: DeliveryOptions['onPause'];
  /** Aborts intake's backpressure waits, and the requests of this runtime's delivery (with their retries). */
  signal?: AbortSignal;
  /** Called after every attempt of the API client, successful or not (request metrics). */
  onApiAttempt?: (info: AttemptInfo) => void;
}

export interface Runtime {
  config: Readonly<Config>;
  logger: Logger;
  store: Store;
  client: ApiClient;
  pool: ParsePool;
  intake: Intake;
  delivery: DeliveryLoop;
  routes: Map<string, RouteConfig>;
  /** Wakes `loop` (another delivery loop over this runtime's store) whenever intake stored a batch. */
  wakeOnIntake(loop: DeliveryLoop): void;
  /** Set when the built-in emulator serves as the API (no `api.url`). */
  emulatorUrl?: string;
  close(): Promise<void>;
}

export const DEFAULT_LEASE_MS = 60_000;
/** Items claimed per delivery batch: bounds the documents delivery holds (× concurrency per route). */
export const DEFAULT_CLAIM_LIMIT = 1_000;

/** Where the built-in emulator keeps its state: beside the SQLite file, else ./data/emulator. */
export function emulatorDataDir(storeUrl: string): string {
  if (storeUrl.startsWith('sqlite:') && !storeUrl.includes(':memory:')) {
    let path = storeUrl.slice('sqlite:'.length).split('?')[0]!;
    if (path.startsWith('//')) path = path.slice(2);
    return join(dirname(resolve(path)), 'emulator');
  }
  return resolve('data', 'emulator');
}

interface ApiEndpoint {
  client: ApiClient;
  emulatorUrl?: string;
  stop?: () => Promise<void>;
}

async function startBuiltInEmulator(config: Readonly<Config>, logger: Logger, onAttempt?: (info: AttemptInfo) => void): Promise<ApiEndpoint> {
  const { createEmulator } = await import('../emulator/index.js');
  const token = randomBytes(16).toString('hex');
  const dataDir = emulatorDataDir(config.store);
  const tags = new Set<string>([DEFAULT_TRANSFORM_TAG, ...config.routes.map((r) => r.transform_tag)]);
  const emulator = createEmulator({ token, dataDir, transformTags: [...tags], logger: false });
  const url = await emulator.listen(0, '127.0.0.1');
  const banner = `NO api.url CONFIGURED: delivering to the BUILT-IN EMULATOR at ${url} (data in ${dataDir}); nothing reaches the real Text Analytics API`;
  logger.warn({ emulatorUrl: url, dataDir }, banner);
  const client = createApiClient({ baseUrl: url, token, timeoutMs: config.api.timeout_ms, retry: retryOf(config), onAttempt });
  await createTargets(config.routes, client, url, token);
  return { client, emulatorUrl: url, stop: () => emulator.close() };
}

/** Creates each route's source (sync) or dataset (predict) in the emulator when missing. */
async function createTargets(routes: readonly RouteConfig[], client: ApiClient, url: string, token: string): Promise<void> {
  for (const route of routes) {
    if (route.mode === 'sync') {
      await client.ensureSource(route.source!);
      continue;
    }
    const res = await fetch(`${url}/api/v1/datasets/${route.dataset!}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ dataset: {} }),
    });
    if (!res.ok && res.status !== 409) throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `emulator: cannot create dataset ${route.dataset!}: HTTP ${res.status}`);
  }
}

function retryOf(config: Readonly<Config>) {
  const r = config.api.retry;
  return { maxAttempts: r.max_attempts, baseDelayMs: r.base_delay_ms, maxDelayMs: r.max_delay_ms, budgetMs: r.budget_ms };
}

async function apiEndpoint(config: Readonly<Config>, logger: Logger, dryRun: boolean, onAttempt?: (info: AttemptInfo) => void): Promise<ApiEndpoint> {
  if (config.api.url !== undefined) {
    if (config.api.token === undefined) {
      throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', 'api.token is not set: pass --token, set MAILGATE_API_TOKEN or write api.token: ${MAILGATE_API_TOKEN}');
    }
    return { client: createApiClient({ baseUrl: config.api.url, token: config.api.token, timeoutMs: config.api.timeout_ms, retry: retryOf(config), onAttempt }) };
  }
  // A dry run sends nothing: no emulator, and a client that is never called.
  if (dryRun) return { client: createApiClient({ baseUrl: 'http://127.0.0.1:9', token: 'dry-run' }) };
  return startBuiltInEmulator(config, logger, onAttempt);
}

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config } = options;
  const logger = options.logger ?? createLogger({ level: config.log_level, destination: process.stderr });
  const routes = new Map(config.routes.map((r) => [r.name, r]));
  checkRoutes(routes.values());
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `leaseMs must be a positive integer, got ${leaseMs}`);
  const store = await openStore(config.store);
  let api: ApiEndpoint | undefined;
  let pool: ParsePool | undefined;
  try {
    api = await apiEndpoint(config, logger, options.dryRun === true, options.onApiAttempt);
    const p = config.parsing;
    pool = new ParsePool({ ...(p.workers === undefined ? {} : { size: p.workers }), timeoutMs: p.timeout_ms, maxMessageBytes: p.max_message_bytes });
    const parsePool = pool;
    // Deliveries woken by each stored intake batch (this runtime's and any the caller adds).
    const wakers = new Set<() => void>();
    const intake = createIntake({
      store, routes,
      parse: (raw, opts) => parsePool.parseEncoded(raw, opts),
      parsing: { body: p.body, headers: p.headers, maxMessageBytes: p.max_message_bytes },
      maxOutbox: config.delivery.max_outbox,
      ...(options.signal ? { signal: options.signal } : {}),
      onBatch: (route, counters) => {
        for (const wake of wakers) wake();
        options.onIntakeBatch?.(route, counters);
      },
    });
    const delivery = createDelivery({
      store,
      routes: [...routes.values()],
      // The same signal ends requests in flight (and their retry waits): an interrupted import
      // stops at once, its items stay queued for the next run.
      deliver: createDeliverFn({ client: api.client, ledger: store, config, dryRun: options.dryRun === true, ...(options.signal ? { signal: options.signal } : {}) }),
      owner: options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
      leaseMs,
      claimLimit: Math.min(DEFAULT_CLAIM_LIMIT, config.delivery.max_documents),
      concurrency: config.delivery.concurrency,
      maxItemAttempts: config.delivery.max_item_attempts,
      onError: (err, route) => logger.error({ err, route: route.name }, 'delivery failed'),
      ...(options.onDeliveryBatch ? { onBatch: options.onDeliveryBatch } : {}),
      onPause: options.onPause ?? ((route, reason, ms) => {
        logger.error({ route: route.name, target: routeTarget(route), code: reason.code, pauseMs: ms },
          `route ${route.name} (${routeTarget(route)}) paused for ${Math.round(ms / 1000)} s: ${reason.message}`);
      }),
    });
    wakers.add(() => delivery.wake());
    const endpoint = api;
    let closed = false;
    const runtime: Runtime = {
      config, logger, store, client: api.client, pool, intake, delivery, routes,
      wakeOnIntake: (loop) => void wakers.add(() => loop.wake()),
      async close() {
        if (closed) return;
        closed = true;
        await parsePool.close();
        await endpoint.stop?.();
        await store.close();
      },
    };
    if (api.emulatorUrl !== undefined) runtime.emulatorUrl = api.emulatorUrl;
    return runtime;
  } catch (err) {
    await pool?.close();
    await api?.stop?.();
    await store.close();
    throw err;
  }
}
