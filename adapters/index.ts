/**
 * The adapter registry: kind → definition `{ kind, mode, schema, create(entry, ctx) }`. `src/`
 * reaches a concrete adapter only through here. Implementations load on first use, so that
 * reading the configuration (and `mailgate --help`) never loads an IMAP client. A new adapter
 * kind is a folder, one line in adapters/config.ts (its schema) and one line below.
 */
import type { z } from 'zod';
import type { Adapter, AdapterContext, AdapterDefinition, AdapterModule, PathInputs } from '../src/pipeline/types.js';
import { ADAPTER_CONFIGS, ADAPTER_KINDS, type AdapterKind } from './config.js';

const MODULES: Record<AdapterKind, () => Promise<AdapterModule>> = {
  files: () => import('./files/index.js'),
  imap: () => import('./imap/index.js'),
  graph: () => import('./graph/index.js'),
  gmail: () => import('./gmail/index.js'),
  webhooks: () => import('./webhooks/index.js'),
  upload: () => import('./upload/index.js'),
  smtp: () => import('./smtp/index.js'),
};

/** The kind that reads files and folders named on the command line (`mailgate import`, `preview`). */
const PATHS: () => Promise<{ pathInputs: PathInputs }> = () => import('./files/index.js');

/** What `mailgate webhook simulate` needs: providers' request builders, loaded on first use. */
export type WebhookSimulator = typeof import('./webhooks/simulate.js');
export type { SimulatedRequest } from './webhooks/provider.js';
export type { WebhookEntry } from './webhooks/config.js';

export { ADAPTER_CONFIGS, ADAPTER_KINDS, type AdapterKind };
export type AdapterEntryOf<K extends AdapterKind> = z.output<(typeof ADAPTER_CONFIGS)[K]['schema']>;

export function isAdapterKind(kind: string): kind is AdapterKind {
  return Object.hasOwn(MODULES, kind);
}

/** The definition of a kind; its implementation is loaded by this call. */
export async function adapterDefinition<K extends AdapterKind>(kind: K): Promise<AdapterDefinition<AdapterEntryOf<K>>> {
  const { create } = await MODULES[kind]();
  const { mode, schema } = ADAPTER_CONFIGS[kind];
  return { kind, mode, schema, create: create as AdapterDefinition<AdapterEntryOf<K>>['create'] };
}

/** The one adapter of a configuration entry of a kind that makes one per entry. */
export async function createAdapter<K extends AdapterKind>(kind: K, entry: AdapterEntryOf<K>, ctx: AdapterContext): Promise<Adapter> {
  const made = await createAdapters(kind, entry, ctx);
  if (made.length !== 1) throw new Error(`adapters.${kind}: this entry makes ${made.length} adapters; use createAdapters`);
  return made[0]!;
}

/**
 * The adapters of a configuration entry (`adapters.<kind>[i]`, already validated): one, or one
 * per mailbox where an entry names several (Graph), so that each runs under its own lease.
 */
export async function createAdapters<K extends AdapterKind>(kind: K, entry: AdapterEntryOf<K>, ctx: AdapterContext): Promise<Adapter[]> {
  const made = (await adapterDefinition(kind)).create(entry, ctx);
  return Array.isArray(made) ? made : [made];
}

/** The reader of files and folders given as paths, and the adapter that imports them. */
export async function pathInputs(): Promise<PathInputs> {
  return (await PATHS()).pathInputs;
}

/** The webhook providers' simulators (`mailgate webhook simulate`, benchmarks). */
export async function webhookSimulator(): Promise<WebhookSimulator> {
  return import('./webhooks/simulate.js');
}
