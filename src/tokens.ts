/**
 * An access-token cache for every kind that calls an OAuth-protected API (Microsoft Graph,
 * Gmail): get-or-fetch, renewed before it expires, and invalidated when the API refuses it.
 * Kind-neutral: the kind supplies how a token is obtained (a library's client-credentials
 * call, a signed JWT exchange); the cache decides when.
 *
 * - `get()` answers the cached token while it has more than `renewBeforeMs` left (or, for a
 *   short-lived token, more than half its lifetime); otherwise it fetches a new one. Concurrent
 *   callers share one fetch, and a failed fetch is not cached (the next `get()` tries again).
 * - `invalidate(token)` after the API answered 401 with that token: the next `get()` fetches a
 *   fresh one with `fresh: true` (the source must then bypass its own cache). Only the token
 *   that was refused is dropped, so many requests refused together cause one renewal.
 */

export interface AccessToken {
  token: string;
  /** When the token stops being valid, in epoch ms. */
  expiresAt: number;
}

/** Obtains a token. `fresh`: the previous one was refused; do not answer from any cache. */
export type TokenFetch = (opts: { fresh: boolean }) => Promise<AccessToken>;

export interface TokenCacheOptions {
  /** Renew a token this long before it expires, in ms. Default 300000 (5 minutes). */
  renewBeforeMs?: number;
  /** The clock, in epoch ms (tests pin it). Default Date.now. */
  now?: () => number;
}

export interface TokenCache {
  /**
   * A valid token: the cached one, or a new one. Rejects with the source's error, or with the
   * signal's reason when it aborts first (the shared fetch goes on for the other callers).
   */
  get(signal?: AbortSignal): Promise<string>;
  /** The API refused `token`: drop it (if it is still the cached one); the next get() fetches a fresh one. */
  invalidate(token: string): void;
  /** Tokens obtained so far (fetches that succeeded). */
  readonly fetches: number;
}

export const DEFAULT_RENEW_BEFORE_MS = 300_000;

export function createTokenCache(fetch: TokenFetch, options: TokenCacheOptions = {}): TokenCache {
  const renewBefore = options.renewBeforeMs ?? DEFAULT_RENEW_BEFORE_MS;
  const now = options.now ?? Date.now;
  let current: (AccessToken & { obtainedAt: number }) | undefined;
  let inflight: Promise<string> | undefined;
  let fresh = false;
  let fetches = 0;

  const usable = (t: AccessToken & { obtainedAt: number }): boolean => {
    const margin = Math.min(renewBefore, (t.expiresAt - t.obtainedAt) / 2);
    return now() < t.expiresAt - margin;
  };

  function obtain(): Promise<string> {
    const wasFresh = fresh;
    const p = fetch({ fresh: wasFresh }).then((t) => {
      current = { ...t, obtainedAt: now() };
      fetches += 1;
      if (wasFresh) fresh = false;
      return t.token;
    });
    inflight = p;
    const clear = () => {
      if (inflight === p) inflight = undefined;
    };
    p.then(clear, clear);
    return p;
  }

  return {
    async get(signal) {
      if (current !== undefined && usable(current)) return current.token;
      return abortable(inflight ?? obtain(), signal);
    },
    invalidate(token) {
      if (current?.token !== token) return;
      current = undefined;
      fresh = true;
    },
    get fetches() {
      return fetches;
    },
  };
}

function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return p;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
