/**
 * The store of `status`, `dlq` and `predictions`: `--store URL`, else MAILGATE_STORE, else the
 * file's `store`, else the default. These commands read only that setting (a configuration's
 * other secrets need not be set), and never create a store: a SQLite file that does not exist is
 * an error naming the stores that do exist nearby.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { loadStoreUrl } from '../config/store-url.js';
import { GatewayError } from '../errors.js';
import { openStore, parseSqliteUrl } from '../store/index.js';
import type { Store } from '../store/types.js';

export interface StoreFlags {
  config?: string;
  store?: string;
}

/** A path as the user would type it: relative when under the working directory, else absolute. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

/** The nearest directory of `path` that exists. */
function nearestExisting(path: string): string {
  let dir = resolve(path);
  while (!existsSync(dir)) dir = dirname(dir);
  return dir;
}

const isFile = (p: string): boolean => statSync(p, { throwIfNoEntry: false })?.isFile() === true;
const isDir = (p: string): boolean => statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;

/** SQLite stores (`*.db`) in `dir` and its direct subdirectories, as paths relative to the working directory. */
export function storesNear(dir: string, max = 10): string[] {
  const found: string[] = [];
  const dbs = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      return [];
    }
    return names.filter((n) => n.endsWith('.db') && isFile(join(d, n))).map((n) => join(d, n));
  };
  found.push(...dbs(dir));
  let subdirs: string[] = [];
  try {
    subdirs = readdirSync(dir)
      .sort()
      .filter((n) => !n.startsWith('.') && n !== 'node_modules' && isDir(join(dir, n)));
  } catch {
    // Not listable: nothing to suggest from it.
  }
  for (const sub of subdirs) found.push(...dbs(join(dir, sub)));
  return found.slice(0, max).map((p) => `sqlite:${shown(p)}`);
}

/** Refuses a SQLite store that does not exist yet, saying what does. */
function mustExist(url: string): void {
  if (!url.startsWith('sqlite:')) return;
  const { path } = parseSqliteUrl(url);
  if (path === ':memory:' || isFile(path)) return;
  const near = isDir(path) ? resolve(path) : nearestExisting(dirname(path));
  const missing = isDir(path) ? `${path} is a directory, not a store file` : `there is no store at ${path}`;
  const where = near === resolve(dirname(path)) || near === resolve(path) ? '' : ` (${shown(near)} is the nearest directory that exists)`;
  const stores = storesNear(near);
  const exists = stores.length === 0 ? 'no SQLite store (*.db) is there' : `stores there: ${stores.join(', ')}`;
  throw new GatewayError(
    'MAILGATE_ERR_STORE_UNAVAILABLE',
    `${missing}${where}; ${exists}. This command only reads a store and never creates one: pass --store with an existing store, or run \`mailgate import\` or \`mailgate serve\` first`,
  );
}

/** The store URL the flags name (as `storeFrom` resolves it), for commands that work on the file itself. */
export async function storeUrlFrom(flags: StoreFlags, env: Record<string, string | undefined>): Promise<string> {
  return loadStoreUrl({
    ...(flags.config === undefined ? {} : { file: flags.config }),
    env,
    overrides: flags.store === undefined ? {} : { store: flags.store },
  });
}

/** The file of a SQLite store the flags name, which must exist; `what` names the command for other stores. */
export async function sqliteFileFrom(flags: StoreFlags, env: Record<string, string | undefined>, what: string): Promise<string> {
  const url = await storeUrlFrom(flags, env);
  if (!url.startsWith('sqlite:')) {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `${what} works on a SQLite store; this store is PostgreSQL: use its own tools (pg_dump, base backups, VACUUM) as docs/store.md describes`,
    );
  }
  mustExist(url);
  const { path } = parseSqliteUrl(url);
  if (path === ':memory:') throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `${what} needs a store file, not sqlite::memory:`);
  return path;
}

export async function storeFrom(flags: StoreFlags, env: Record<string, string | undefined>): Promise<Store> {
  const url = await storeUrlFrom(flags, env);
  mustExist(url);
  return openStore(url);
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
