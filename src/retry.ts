/**
 * Backoff between retries, for every layer: the API client, the IMAP reconnects, delivery's
 * per-item retries and the after-delivery actions. Pure: no clock, no timers, and the random
 * source is a parameter, so tests pin it instead of doing statistics.
 *
 * The wait before retry n (0 = the first retry) is d = min(cap, base · factor^n), spread by
 * jitter so that many clients failing together do not retry together:
 * - `equal`: half fixed, half random — uniform over [d/2, d) — a floor of d/2 and a ceiling of d;
 * - `full`: uniform over [0, d) — the widest spread, for many clients that failed at the same
 *   instant (every IMAP connection of a process when the server restarts);
 * - `{ spread: j }`: uniform over [d·(1−j), d·(1+j)) — the schedule on average.
 * A server's requested wait (`Retry-After`, an IMAP server's hint) is a floor: see `atLeast`.
 */

export interface Backoff {
  /** The wait before the first retry, before jitter, in ms. */
  baseMs: number;
  /** Ceiling of the wait before jitter, in ms. */
  capMs: number;
  /** Growth per retry. Default 2. */
  factor?: number;
  /** Largest exponent used (later retries wait as long as this one); keeps factor^n finite. Default 30. */
  maxExponent?: number;
  jitter: 'equal' | 'full' | { spread: number };
}

/** The jittered wait in ms (not rounded) before retry `retry` (0-based; a negative one counts as 0). */
export function backoffDelay(retry: number, backoff: Backoff, random: () => number = Math.random): number {
  const n = Math.min(Math.max(retry, 0), backoff.maxExponent ?? 30);
  const d = Math.min(backoff.capMs, backoff.baseMs * (backoff.factor ?? 2) ** n);
  if (backoff.jitter === 'equal') return d / 2 + random() * (d / 2);
  if (backoff.jitter === 'full') return random() * d;
  const j = backoff.jitter.spread;
  return d * (1 - j + 2 * j * random());
}

/**
 * `delayMs`, or longer when the server asked for a longer wait: max(delay, requested), the
 * request clamped to [0, maxRequestedMs]. An absent request changes nothing.
 */
export function atLeast(delayMs: number, requestedMs: number | undefined, maxRequestedMs = Number.POSITIVE_INFINITY): number {
  if (requestedMs === undefined) return delayMs;
  return Math.max(delayMs, Math.min(Math.max(requestedMs, 0), maxRequestedMs));
}
