/** The store of `status` and `dlq`: `--store URL`, else the file's `store`, else the default. */
import { loadConfig } from '../config/load.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';

export interface StoreFlags {
  config?: string;
  store?: string;
}

export async function storeFrom(flags: StoreFlags, env: Record<string, string | undefined>): Promise<Store> {
  const config = loadConfig({
    ...(flags.config === undefined ? {} : { file: flags.config }),
    env,
    overrides: flags.store === undefined ? {} : { store: flags.store },
  });
  return openStore(config.store);
}

export async function withStore<T>(
  flags: StoreFlags,
  env: Record<string, string | undefined>,
  fn: (store: Store) => Promise<T>,
): Promise<T> {
  const store = await storeFrom(flags, env);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
