/**
 * The settings of a configuration before validation: defaults < file < environment < flags, one
 * mapping (precedence as docs/config.md states it).
 */
import { interpolate, readConfigSource, type ConfigSource, type Env, type Json } from './source.js';

/** Environment variables that set a configuration field directly (after the file, before flags). */
export const ENV_FIELDS: Record<string, string[]> = {
  MAILGATE_STORE: ['store'],
  MAILGATE_API_URL: ['api', 'url'],
  MAILGATE_API_TOKEN: ['api', 'token'],
  MAILGATE_LISTEN: ['server', 'listen'],
  MAILGATE_LOG_LEVEL: ['log_level'],
  MAILGATE_LOG_FORMAT: ['log_format'],
};

export function setPath(target: Record<string, Json>, path: string[], value: Json): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (!next || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, Json>;
  }
  node[path[path.length - 1]!] = value;
}

/** `over` on top of `base`, section by section: a setting of `over` replaces that setting only, never a whole section. */
export function deepMerge(base: Record<string, Json>, over: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Record<string, Json>, v as Record<string, Json>)
        : v;
  }
  return out;
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

export interface LoadOptions {
  /** Path of mailgate.yaml; omitted: embedded defaults only. */
  file?: string;
  env?: Env;
  /** Values from command-line flags, highest precedence. */
  overrides?: Record<string, Json>;
  /** Settings in place of a file (`mailgate serve`'s embedded defaults), below the environment and the flags; ignored with `file`. */
  settings?: Record<string, Json>;
}

/** The settings `options` give, merged in their order of precedence, and the file they were read from. */
export function mergedSettings(options: LoadOptions): { source?: ConfigSource; merged: Record<string, Json> } {
  const env = options.env ?? {};
  const source = options.file === undefined ? undefined : readConfigSource(options.file);
  const fromFile = source === undefined ? (options.settings ?? {}) : (interpolate(source.settings, env) as Record<string, Json>);
  const fromEnv: Record<string, Json> = {};
  for (const [name, path] of Object.entries(ENV_FIELDS)) {
    const v = env[name];
    if (v !== undefined && v !== '') setPath(fromEnv, path, v);
  }
  const merged = deepMerge(deepMerge(fromFile, fromEnv), options.overrides ?? {});
  return { ...(source === undefined ? {} : { source }), merged };
}
