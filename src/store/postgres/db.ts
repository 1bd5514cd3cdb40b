/** Pool helpers for the PostgreSQL store: transactions and error classification. */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

export type Queryable = pg.Pool | pg.PoolClient;

/**
 * The clock leases and due times are computed with: by default (undefined) the server's
 * `clock_timestamp()`, one clock for every replica; when the store was opened with `now`
 * (tests), that clock's time, passed to each statement as a parameter.
 */
export type PgClock = (() => number) | undefined;

/** The parameter `pgNow()` reads: null means "the server's clock". */
export function nowParam(clock: PgClock): Date | null {
  return clock === undefined ? null : new Date(clock());
}

/** SQL for "now", given the number of the parameter that holds `nowParam()`. */
export const pgNow = (n: number): string => `COALESCE($${n}::timestamptz, clock_timestamp())`;

/** Connection-level failures and a full disk: the store is unreachable (retry later), not a bad write. */
const UNAVAILABLE_SQLSTATE = /^(08|57P0[123]|53300|53200|53100|3D000|28)/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'EHOSTUNREACH']);

export function isPgUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|connection.*(ended|closed)|Client was closed|Cannot use a pool after calling end/i.test(message);
}

/** A write that failed for want of space on the server (disk_full), which is also unavailable: retry later. */
export function isPgFull(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '53100';
}

/** Deadlock and serialization failures: the transaction rolled back and may simply run again. */
const RETRYABLE_SQLSTATE = new Set(['40P01', '40001']);
/**
 * Attempts for a transaction that keeps hitting deadlocks (replicas enqueuing the same keys in
 * different orders). Before attempt n + 1 the loser waits 5n to 15n ms (at random), so that it
 * runs again after the winners commit instead of meeting them again (three writers re-running at
 * once deadlocked three times in a row).
 */
const TRANSACTION_ATTEMPTS = 6;

async function attempt<R>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<R>): Promise<R> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackErr) {
      broken = rollbackErr as Error;
    }
    throw err;
  } finally {
    client.release(broken);
  }
}

/** Runs `fn` again after a deadlock or serialization failure (it rolled back), up to TRANSACTION_ATTEMPTS times. */
export async function retryRolledBack<R>(fn: () => Promise<R>): Promise<R> {
  for (let i = 1; ; i += 1) {
    try {
      return await fn();
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      if (i >= TRANSACTION_ATTEMPTS || typeof code !== 'string' || !RETRYABLE_SQLSTATE.has(code)) throw err;
      await sleep(5 * i + Math.random() * 10 * i);
    }
  }
}

/** Runs `fn` in one transaction on one pooled connection; rolls back on any error, re-runs after a deadlock. */
export function withTransaction<R>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<R>): Promise<R> {
  return retryRolledBack(() => attempt(pool, fn));
}

/** PostgreSQL refuses NUL in text columns; mail-derived text keeps everything else. */
export function pgText(value: string): string {
  return value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
}

/** A UTF-16 surrogate, and one without its other half. */
const SURROGATE = /[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text inside a JSON parameter that the statement reads back as text (`json_to_recordset`) with
 * a lone surrogate as U+FFFD, which is what the UTF-8 of a plain text parameter carries
 * (PostgreSQL refuses the `\uD800` escape JSON would give it).
 */
function wellFormed(value: string): string {
  return SURROGATE.test(value) ? value.replace(LONE_SURROGATE, '\uFFFD') : value;
}

/** Mail-derived text inside a JSON parameter read back as text: `pgText`, then `wellFormed`. */
const pgJsonText = (value: string): string => wellFormed(pgText(value));

/** How `jsonRecords` has its rows' text made fit: mail-derived text, and other text. */
export interface JsonFixes {
  /** `pgJsonText` (NUL and lone surrogates as U+FFFD). */
  text: (value: string) => string;
  /** `wellFormed` (lone surrogates as U+FFFD; a NUL is refused by the server, as in any text parameter). */
  wellFormed: (value: string) => string;
}

const AS_IS: JsonFixes = { text: (v) => v, wellFormed: (v) => v };
const FIXED: JsonFixes = { text: pgJsonText, wellFormed };

/**
 * Rows as one JSON text for json_to_recordset, built by `build` with its text passed through the
 * fixes: first as it is, with no scan of each value; JSON.stringify writes a NUL as `\u0000` and a
 * lone surrogate as `\udXXX`, so only a text showing either is built again with the fixes applied.
 */
export function jsonRecords(build: (fix: JsonFixes) => unknown[]): string {
  const json = JSON.stringify(build(AS_IS));
  return json.includes('\\u0000') || json.includes('\\ud') ? JSON.stringify(build(FIXED)) : json;
}

/** An element of an array literal that must be quoted with its backslashes and double quotes escaped. */
const ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/**
 * An array parameter as PostgreSQL's array literal, the text `pg` sends for a JS array, built in
 * one pass (`pg` runs two regular expressions over every element): strings quoted (backslash and
 * double quote escaped), dates as ISO-8601, numbers as they are, null and undefined as NULL.
 */
export function pgArray(values: ReadonlyArray<string | number | Date | null | undefined>): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'number') out += String(v);
    else {
      const s = typeof v === 'string' ? v : v.toISOString();
      out += ESCAPE.test(s) ? `"${s.replace(ESCAPED, '\\$&')}"` : `"${s}"`;
    }
  }
  return `${out}}`;
}

/** bigint columns arrive as strings; ids stay far below 2^53. */
export const toId = (v: string | number): number => Number(v);

export const iso = (v: Date | string): string => (v instanceof Date ? v : new Date(v)).toISOString();
