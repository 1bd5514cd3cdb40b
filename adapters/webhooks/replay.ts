/**
 * The replay cache behind VerifyContext.remember: tokens seen recently (Mailgun's per-request
 * token) with their expiry. Bounded: expired tokens are pruned as new ones arrive, and when it is
 * still full the oldest go first (the provider's freshness window still bounds a replay then).
 * In memory, per process: a replica or a restart does not know the tokens of another; the
 * freshness window and the SHA-256 deduplication of the sink cover that.
 */
import { parseLimit } from '../../src/limits.js';

export const REPLAY_CACHE_SIZE = 100_000;

export class ReplayCache {
  readonly #seen = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly maxSize: number = REPLAY_CACHE_SIZE,
  ) {
    parseLimit('replay cache size', maxSize, REPLAY_CACHE_SIZE);
  }

  get size(): number {
    return this.#seen.size;
  }

  /** Records `token` for `ttlMs`; false when it was seen before and has not expired (a replay). */
  remember(token: string, ttlMs: number): boolean {
    const now = this.now();
    const expiry = this.#seen.get(token);
    if (expiry !== undefined && expiry > now) return false;
    this.#seen.delete(token);
    if (this.#seen.size >= this.maxSize) this.#prune(now);
    this.#seen.set(token, now + ttlMs);
    return true;
  }

  /** Forgets `token` (its request was not stored, so the provider's retry with it must pass). */
  forget(token: string): void {
    this.#seen.delete(token);
  }

  #prune(now: number): void {
    for (const [token, expiry] of this.#seen) if (expiry <= now) this.#seen.delete(token);
    // Still full: drop the oldest entries (Map keeps insertion order).
    for (const token of this.#seen.keys()) {
      if (this.#seen.size < this.maxSize) break;
      this.#seen.delete(token);
    }
  }
}
