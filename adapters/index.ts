/**
 * The adapter registry: kind → factory. `src/` reaches a concrete adapter only through here;
 * a new adapter is a folder under adapters/ and one line below.
 */
import type { Logger } from '../src/logger.js';
import type { Adapter } from '../src/pipeline/types.js';
import type { AdapterKind } from './config.js';
import { createFilesAdapter } from './files/index.js';
import { createImapAdapter } from './imap/index.js';

export const ADAPTERS = {
  files: createFilesAdapter,
  imap: (config: { accounts: readonly unknown[]; logger?: Logger }) => createImapAdapter(config.accounts, config.logger ? { logger: config.logger } : {}),
} as const satisfies Record<AdapterKind, (config: never) => Adapter>;

export type { AdapterKind };
export type AdapterConfig<K extends AdapterKind> = Parameters<(typeof ADAPTERS)[K]>[0];

export function isAdapterKind(kind: string): kind is AdapterKind {
  return Object.hasOwn(ADAPTERS, kind);
}

export function createAdapter<K extends AdapterKind>(kind: K, config: AdapterConfig<K>): Adapter {
  const factory = ADAPTERS[kind] as (config: AdapterConfig<K>) => Adapter;
  return factory(config);
}

/** The kinds the configuration accepts under `adapters:` (one per factory above), and the schemas. */
export { ADAPTER_KINDS, duplicateAccount, imapAccountSchema } from './config.js';
