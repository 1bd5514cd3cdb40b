/**
 * The API the runtime delivers to: the configured Text Analytics API, or (no `api.url`) the
 * built-in emulator, started here with each route's source or dataset created in it.
 */
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { createApiClient, type ApiClient, type AttemptInfo } from '../api/client.js';
import type { Config, RouteConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import { DEFAULT_TRANSFORM_TAG } from '../limits.js';
import type { Logger } from '../logger.js';

export interface ApiEndpoint {
  client: ApiClient;
  emulatorUrl?: string;
  stop?: () => Promise<void>;
}

/** Where the built-in emulator keeps its state: beside the SQLite file, else ./data/emulator. */
export function emulatorDataDir(storeUrl: string): string {
  if (storeUrl.startsWith('sqlite:') && !storeUrl.includes(':memory:')) {
    let path = storeUrl.slice('sqlite:'.length).split('?')[0]!;
    if (path.startsWith('//')) path = path.slice(2);
    return join(dirname(resolve(path)), 'emulator');
  }
  return resolve('data', 'emulator');
}

async function startBuiltInEmulator(
  config: Readonly<Config>,
  logger: Logger,
  onAttempt?: (info: AttemptInfo) => void,
): Promise<ApiEndpoint> {
  const { createEmulator } = await import('../emulator/index.js');
  const token = randomBytes(16).toString('hex');
  const dataDir = emulatorDataDir(config.store);
  const tags = new Set<string>([DEFAULT_TRANSFORM_TAG, ...config.routes.map((r) => r.transform_tag)]);
  const emulator = createEmulator({ token, dataDir, transformTags: [...tags], logger: false });
  const url = await emulator.listen(0, '127.0.0.1');
  const banner = `NO api.url CONFIGURED: delivering to the BUILT-IN EMULATOR at ${url} (data in ${dataDir}); nothing reaches the real Text Analytics API`;
  logger.warn({ emulatorUrl: url, dataDir }, banner);
  const client = createApiClient({ baseUrl: url, token, timeoutMs: config.api.timeout_ms, retry: retryOf(config), onAttempt });
  try {
    await createTargets(config.routes, client);
  } catch (err) {
    await emulator.close();
    throw err;
  }
  return { client, emulatorUrl: url, stop: () => emulator.close() };
}

/** Creates each route's source (sync) or dataset (predict) in the emulator when missing. */
async function createTargets(routes: readonly RouteConfig[], client: ApiClient): Promise<void> {
  for (const route of routes) {
    if (route.mode === 'sync') await client.ensureSource(route.source!);
    else await client.ensureDataset(route.dataset!);
  }
}

function retryOf(config: Readonly<Config>) {
  const r = config.api.retry;
  return { maxAttempts: r.max_attempts, baseDelayMs: r.base_delay_ms, maxDelayMs: r.max_delay_ms, budgetMs: r.budget_ms };
}

export async function apiEndpoint(
  config: Readonly<Config>,
  logger: Logger,
  dryRun: boolean,
  onAttempt?: (info: AttemptInfo) => void,
): Promise<ApiEndpoint> {
  if (config.api.url !== undefined) {
    if (config.api.token === undefined) {
      throw new GatewayError(
        'MAILGATE_ERR_CONFIG_INVALID',
        'api.token is not set: pass --token, set MAILGATE_API_TOKEN or write api.token: ${MAILGATE_API_TOKEN}',
      );
    }
    const client = createApiClient({
      baseUrl: config.api.url,
      token: config.api.token,
      timeoutMs: config.api.timeout_ms,
      retry: retryOf(config),
      onAttempt,
    });
    return { client };
  }
  // A dry run sends nothing: no emulator, and a client that is never called.
  if (dryRun) return { client: createApiClient({ baseUrl: 'http://127.0.0.1:9', token: 'dry-run' }) };
  return startBuiltInEmulator(config, logger, onAttempt);
}
