/**
 * The configuration as loadConfig (load.ts) reads it, validated with the entry schemas of only
 * the adapter kinds it names: a run of `mailgate import` or `mailgate serve` with files and IMAP
 * entries builds neither the Gmail nor the webhook schema. A kind's list that is absent is empty
 * with or without its schema, so the result is loadConfig's; an invalid configuration is reported
 * by loadConfig itself, with the whole schema (the same error).
 */
import { deepFreeze, mergedSettings, type LoadOptions } from './merge.js';
import { configSchemaWith, entrySchemas, type Config } from './sections.js';

export async function loadNamedConfig(options: LoadOptions = {}): Promise<Readonly<Config>> {
  const { merged } = mergedSettings(options);
  const adapters = merged['adapters'];
  const named = typeof adapters === 'object' && adapters !== null && !Array.isArray(adapters) ? Object.keys(adapters) : [];
  const schema = configSchemaWith(await entrySchemas(named));
  // Parsed once per process: zod's compiled fast path for objects would cost more to build than it saves.
  const result = schema.safeParse(merged, { jitless: true });
  if (!result.success) return (await import('./load.js')).loadConfig(options);
  return deepFreeze(result.data);
}
