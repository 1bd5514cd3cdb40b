/**
 * Runs the service as a process: loads the configuration (or the embedded defaults), starts,
 * prints where things are, and handles SIGTERM/SIGINT — the first stops gracefully, within
 * `delivery.drain_ms` + `server.stop_timeout_ms` (past that it exits with status 1, naming what
 * was still open), and a second exits at once.
 */
import { deepMerge, loadConfig, type Json } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { resolveLogFormat, useColors, type LogFormat } from '../log-pretty.js';
import { createLogger, type Logger } from '../logger.js';
import { embeddedAdminKey, type EmbeddedAdminKey } from './admin-key.js';
import { embeddedConfig } from './defaults.js';
import { startService, type Service } from './index.js';

export interface RunServiceOptions {
  /** mailgate.yaml; omitted: the embedded defaults. */
  configFile?: string;
  env: Record<string, string | undefined>;
  /** Overrides `delivery.drain_ms` (`--drain-ms`), validated with the rest of the configuration. */
  drainMs?: number;
  /** Outbox claim lease in ms (default `CLAIM_LEASE_MS`, src/limits.ts). */
  leaseMs?: number;
  /** Overrides `log_format` (`--log-format`). */
  logFormat?: LogFormat;
  /** Human-readable lines (URLs, the generated admin key). */
  print: (line: string) => void;
  /** Exit the process at once (second signal, or a stop past its bound). */
  exit: (code: number) => void;
}

/** The embedded defaults: their settings, and the folder whose ./data keeps the admin key. */
export interface EmbeddedDefaults {
  settings: Record<string, Json>;
  cwd: string;
}

const embeddedDefaults = (): EmbeddedDefaults => ({ settings: embeddedConfig() as Record<string, Json>, cwd: process.cwd() });

/**
 * The configuration `mailgate serve` runs with: the file (or the embedded defaults) under the
 * environment and its flags, merged setting by setting (a flag never replaces a whole section).
 */
export function configOf(
  options: Pick<RunServiceOptions, 'configFile' | 'env' | 'drainMs'>,
  embedded: () => EmbeddedDefaults = embeddedDefaults,
): {
  config: Readonly<Config>;
  adminKey?: EmbeddedAdminKey;
} {
  const flags: Record<string, Json> = options.drainMs === undefined ? {} : { delivery: { drain_ms: options.drainMs } };
  if (options.configFile !== undefined) return { config: loadConfig({ file: options.configFile, env: options.env, overrides: flags }) };
  // Embedded defaults: an admin key kept under ./data so that the admin API, the console and the
  // preview page work locally, and an open console tab stays signed in across restarts. They take
  // the place of a file: the environment and the flags are set over them.
  const { settings, cwd } = embedded();
  const adminKey = embeddedAdminKey(cwd);
  const config = loadConfig({
    env: options.env,
    settings: deepMerge(settings, { server: { api_keys: [adminKey.key] } }),
    overrides: flags,
  });
  return { config, adminKey };
}

/** Logs go to stdout; pretty (with colours unless NO_COLOR) when stdout is a terminal, unless the flag or log_format say otherwise. */
function serviceLogger(config: Readonly<Config>, options: RunServiceOptions): Logger {
  const format = resolveLogFormat(options.logFormat ?? config.log_format, process.stdout);
  return createLogger({ level: config.log_level, format, colors: format === 'pretty' && useColors(process.stdout, options.env) });
}

/** Resolves with the exit code once the service has stopped (after a signal). */
export async function runService(options: RunServiceOptions): Promise<number> {
  const { config, adminKey } = configOf(options);
  const logger = serviceLogger(config, options);
  let service: Service | undefined;
  const force = new AbortController();
  let signals = 0;
  let resolveStop!: () => void;
  const stopRequested = new Promise<void>((r) => (resolveStop = r));
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting at once');
      force.abort();
      options.exit(1);
      return;
    }
    logger.info({ signal }, 'signal received: stopping (send it again to exit at once)');
    resolveStop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    service = await startService(config, {
      logger,
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    });
    if (service.emulatorUrl)
      options.print(`mailgate: API = BUILT-IN EMULATOR at ${service.emulatorUrl} (no api.url configured; nothing reaches the real API)`);
    options.print(
      `mailgate: serving on ${service.url}  (/livez /readyz /metrics, admin API under /api, console /console, preview page /preview)`,
    );
    if (adminKey) {
      options.print(`mailgate: embedded defaults: samples/ → source mailgate/samples, store ${config.store}`);
      const kept = adminKey.created ? `generated, kept in ${adminKey.path}` : `kept in ${adminKey.path}`;
      options.print(
        `mailgate: admin key: ${adminKey.key}  (${kept}; e.g. curl -H 'Authorization: Bearer ${adminKey.key}' ${service.url}/api/status)`,
      );
    }
    await stopRequested;
    return await stopWithin(service, config.delivery.drain_ms + config.server.stop_timeout_ms, { logger, force, exit: options.exit });
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/**
 * Stops the service; should that outlast `boundMs` (a close that hangs: a client that never
 * finishes its request, a store that never answers), logs what is still open and exits with 1.
 */
async function stopWithin(
  service: Service,
  boundMs: number,
  ctx: { logger: Logger; force: AbortController; exit: (code: number) => void },
): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const overdue = new Promise<'overdue'>((resolve) => (timer = setTimeout(() => resolve('overdue'), boundMs)));
  try {
    if ((await Promise.race([service.stop(ctx.force.signal).then(() => 'stopped' as const), overdue])) === 'stopped') return 0;
  } finally {
    clearTimeout(timer);
  }
  const open = service.openParts();
  ctx.logger.error(
    { code: 'MAILGATE_ERR_SERVICE_STOP_TIMEOUT', boundMs, open },
    `stopping took longer than ${boundMs} ms (delivery.drain_ms + server.stop_timeout_ms); still open: ${open.join(', ') || 'nothing named'}; exiting`,
  );
  ctx.force.abort();
  ctx.exit(1);
  return 1;
}
