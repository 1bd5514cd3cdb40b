/**
 * Configuration is read once: defaults < file < environment < flags, validated strictly,
 * then frozen. Nothing else in mailgate reads process.env. loadConfig validates with the schema
 * of every adapter kind; loadNamedConfig (load-named.ts) with those of the kinds the
 * configuration names, and reports an invalid one as loadConfig does.
 */
import type { z } from 'zod';
import { GatewayError } from '../errors.js';
import { explainIssues, type Locate } from './explain.js';
import { deepFreeze, ENV_FIELDS, mergedSettings, setPath, type LoadOptions } from './merge.js';
import { ConfigSchema, type Config } from './schema.js';
import type { Env, Json } from './source.js';

export { deepMerge, type LoadOptions } from './merge.js';
export type { Json } from './source.js';

/** Turns zod issues into one message that names each path and what to do. */
export function describeIssues(error: z.ZodError, input?: unknown, locate?: Locate): string {
  return explainIssues(error, { schema: ConfigSchema, input, ...(locate && { locate }) });
}

/** What sets values over the file, the highest precedence first: the command line, then each variable of ENV_FIELDS. */
function overLayers(env: Env, overrides: Record<string, Json>): Array<{ from: string; values: Record<string, Json> }> {
  const layers = [{ from: 'the command line', values: overrides }];
  for (const [name, path] of Object.entries(ENV_FIELDS)) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    const values: Record<string, Json> = {};
    setPath(values, path, v);
    layers.push({ from: name, values });
  }
  return layers;
}

const isMapping = (v: Json | undefined): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether `layer` gives the setting at `path` its whole value: it holds a value or a list there,
 * or replaces a part of the path whole (a list, such as the routes of the command line). A
 * section it only adds to (merged with the file's) is not its own.
 */
function sets(layer: Record<string, Json>, path: ReadonlyArray<PropertyKey>): boolean {
  let node: Json | undefined = layer;
  for (const p of path) {
    if (!isMapping(node)) return true;
    node = typeof p === 'string' ? node[p] : undefined;
    if (node === undefined) return false;
  }
  return !isMapping(node);
}

export function loadConfig(options: LoadOptions = {}): Readonly<Config> {
  const env = options.env ?? {};
  const { source, merged } = mergedSettings(options);
  // Parsed once per process: zod's compiled fast path for objects would cost more to build than it saves.
  const result = ConfigSchema.safeParse(merged, { jitless: true });
  if (!result.success) {
    const where = options.file ?? 'configuration';
    const over = overLayers(env, options.overrides ?? {});
    const locate: Locate = (path, key) => {
      const from = over.find((layer) => sets(layer.values, path));
      return from === undefined ? source?.locate(path, key) : { from: from.from };
    };
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `${where} is invalid:\n${describeIssues(result.error, merged, locate)}`);
  }
  return deepFreeze(result.data);
}
