/**
 * The configuration of `import` and `dlq replay`: `--config FILE [--route NAME]`, or standalone
 * flags that make a one-route configuration. Flags override the file; the environment is only
 * read through the configuration's loader (MAILGATE_API_TOKEN, MAILGATE_STORE…).
 */
import { loadNamedConfig } from '../config/load-named.js';
import { adaptersSchemaWith, type Config, type RouteConfig } from '../config/sections.js';
import { GatewayError } from '../errors.js';

export interface RouteFlags {
  config?: string;
  route?: string;
  apiUrl?: string;
  token?: string;
  source?: string;
  transformTag?: string;
  mode?: 'sync' | 'predict';
  dataset?: string;
  modelVersion?: string;
  threshold?: string;
  store?: string;
}

/** The route name a standalone import uses when --route is not given. */
export const STANDALONE_ROUTE = 'import';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Flags that are missing or do not go together: a usage error (exit 2), not a bad configuration. */
function usage(message: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_CLI_USAGE', message);
}

function modelVersion(v: string | undefined): Json | undefined {
  if (v === undefined) return undefined;
  return /^\d+$/.test(v) ? Number(v) : v;
}

function threshold(v: string | undefined): Json | undefined {
  if (v === undefined || v === 'auto') return v;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw usage(`--threshold must be a number 0..1 or "auto", got "${v}"`);
  return n;
}

function standaloneRoute(flags: RouteFlags): Record<string, Json> {
  const route: Record<string, Json> = { name: flags.route ?? STANDALONE_ROUTE, mode: flags.mode ?? 'sync' };
  const add = (key: string, value: Json | undefined) => {
    if (value !== undefined) route[key] = value;
  };
  add('source', flags.source);
  add('dataset', flags.dataset);
  add('transform_tag', flags.transformTag);
  add('model_version', modelVersion(flags.modelVersion));
  add('threshold', threshold(flags.threshold));
  return route;
}

const ROUTE_FLAGS: Array<[keyof RouteFlags, string]> = [
  ['source', '--source'],
  ['dataset', '--dataset'],
  ['mode', '--mode'],
  ['transformTag', '--transform-tag'],
  ['modelVersion', '--model-version'],
  ['threshold', '--threshold'],
];

/** The validated configuration reduced to the one route the command works on. */
export async function routeConfig(
  flags: RouteFlags,
  env: Record<string, string | undefined>,
): Promise<{ config: Readonly<Config>; route: RouteConfig }> {
  const overrides: Record<string, Json> = {};
  if (flags.store !== undefined) overrides.store = flags.store;
  const api: Record<string, Json> = {};
  if (flags.apiUrl !== undefined) api.url = flags.apiUrl;
  if (flags.token !== undefined) api.token = flags.token;
  if (Object.keys(api).length > 0) overrides.api = api;
  if (flags.config === undefined) {
    if (flags.mode !== 'predict' && flags.source === undefined)
      throw usage('give --config FILE --route NAME, or --source project/source (sync) or --mode predict --dataset project/dataset');
    overrides.routes = [standaloneRoute(flags)];
  } else {
    const given = ROUTE_FLAGS.filter(([k]) => flags[k] !== undefined).map(([, f]) => f);
    if (given.length > 0) throw usage(`${given.join(', ')} cannot be combined with --config: the route comes from the file (--route NAME)`);
  }
  const loaded = await loadNamedConfig({ ...(flags.config === undefined ? {} : { file: flags.config }), env, overrides });
  const name = flags.route ?? (loaded.routes.length === 1 ? loaded.routes[0]!.name : undefined);
  if (name === undefined)
    throw usage(`${flags.config}: name the route with --route (one of: ${loaded.routes.map((r) => r.name).join(', ') || 'none defined'})`);
  const route = loaded.routes.find((r) => r.name === name);
  if (route === undefined) throw usage(`route "${name}" is not defined (known: ${loaded.routes.map((r) => r.name).join(', ') || 'none'})`);
  // The command reads its own inputs: the file's adapters are not started.
  const config: Config = { ...loaded, routes: [route], adapters: adaptersSchemaWith(new Map()).parse({}, { jitless: true }) };
  return { config, route };
}
