/**
 * Opens a store from a URL:
 *   sqlite:PATH                 a SQLite file (parent directories are created)
 *   sqlite:PATH?synchronous=normal   the same with synchronous=NORMAL (see docs/store.md)
 *   sqlite:PATH?max_page_count=N     the file may not grow past N pages (writes then fail as on a full disk)
 *   sqlite::memory:             an in-memory SQLite database (tests)
 *   postgres://… postgresql://… a PostgreSQL database
 * The store is migrated before it is returned.
 */
import { GatewayError } from '../errors.js';
import type { PostgresOptions } from './postgres/index.js';
import type { SqliteOptions } from './sqlite/index.js';
import type { Store } from './types.js';

export type * from './types.js';
export type { PostgresOptions, SqliteOptions };

export interface OpenStoreOptions {
  sqlite?: SqliteOptions;
  postgres?: PostgresOptions;
  /**
   * The clock for leases, claims and retry due times (ms since the epoch), for either kind;
   * default: `Date.now` for SQLite, the server's clock for PostgreSQL. Tests inject a fake one.
   */
  now?: () => number;
}

function invalid(message: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_CONFIG_INVALID', message);
}

/** Splits `sqlite:PATH[?synchronous=full|normal&max_page_count=N]` into a path and options. */
export function parseSqliteUrl(url: string): { path: string; options: SqliteOptions } {
  let rest = url.slice('sqlite:'.length);
  const options: SqliteOptions = {};
  const q = rest.indexOf('?');
  if (q >= 0) {
    const params = new URLSearchParams(rest.slice(q + 1));
    rest = rest.slice(0, q);
    for (const [name, value] of params) {
      if (name === 'max_page_count') {
        const n = Number(value);
        if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n) || n < 1)
          throw invalid(`SQLite max_page_count must be a positive integer, got "${value}"`);
        options.maxPageCount = n;
        continue;
      }
      if (name !== 'synchronous') throw invalid(`unknown SQLite store option "${name}" (known: synchronous, max_page_count)`);
      const v = value.toUpperCase();
      if (v !== 'FULL' && v !== 'NORMAL') throw invalid(`SQLite synchronous must be full or normal, got "${value}"`);
      options.synchronous = v;
    }
  }
  if (rest.startsWith('//')) rest = rest.slice(2); // sqlite:///abs/path and sqlite://rel/path
  if (rest === '') throw invalid('the SQLite store URL names no file: use sqlite:PATH or sqlite::memory:');
  return { path: rest, options };
}

/** The `now` option, when given, for the implementation's own options. */
function clockOf(options: OpenStoreOptions): { now?: () => number } {
  return options.now === undefined ? {} : { now: options.now };
}

/** Each implementation (and its driver) is loaded when a store of its kind is opened. */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) {
    const { path, options: fromUrl } = parseSqliteUrl(url);
    const { openSqliteStore } = await import('./sqlite/index.js');
    return openSqliteStore(path, { ...options.sqlite, ...fromUrl, ...clockOf(options) });
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { openPostgresStore } = await import('./postgres/index.js');
    return openPostgresStore(url, { ...options.postgres, ...clockOf(options) });
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  throw invalid(
    `unknown store URL scheme ${scheme === undefined ? `in "${url}"` : `"${scheme}:"`}: use sqlite:PATH, sqlite::memory: or postgres://…`,
  );
}
