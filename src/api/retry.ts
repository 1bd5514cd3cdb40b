/**
 * The retry policy of the API client, as pure functions (no clock, no timers, no I/O).
 *
 * What is retried (notes §7-§8): failures before a response (network, deadline), 408, 409,
 * 429 and 5xx. Never 400, 401, 403, 404, 413 or 422: the same request would fail the same
 * way (the batcher splits 400/413/422 instead). Never a 2xx whose body is not what the
 * endpoint promises: the service processed the request (a billable predict would be billed
 * again), so the caller decides.
 *
 * Backoff: the official client waits d = 5 s, 10 s, 20 s (notes §8, `base · factor^(k-1)`
 * before retry k); mailgate's default schedule is 2 s, 4 s, 8 s … over more attempts. It waits
 * uniformly within ±jitter of d — [d·(1−jitter), d·(1+jitter)), default ±50 % — so the waits
 * keep a floor, average the schedule, and clients that failed together do not retry together. A `Retry-After` from the server (not documented for
 * the service, notes §7.2, but honoured) is a floor: the wait is max(backoff, Retry-After),
 * and a wait that would end past the time budget ends the call instead, carrying the
 * server's `retryAfterMs` for the caller to reschedule.
 */
import { GatewayError, type ErrorCode } from '../errors.js';
import { atLeast, backoffDelay } from '../retry.js';
import { parseLimit } from '../limits.js';

export interface RetryPolicy {
  /** Attempts in total, the first one included (1 = never retry). Default 6 (the official CLI makes 4). */
  maxAttempts: number;
  /** The wait before the first retry, before jitter, in ms. Default 2000 (the official CLI waits 5 s, 10 s, 20 s, notes §8). */
  baseDelayMs: number;
  /** Growth factor per retry. Default 2. */
  factor: number;
  /** Cap of the wait before jitter, in ms. Default 60000. */
  maxDelayMs: number;
  /** Relative spread of each wait around its schedule, 0..1 (0 = exactly the schedule). Default 0.5. */
  jitter: number;
  /** Largest `Retry-After` honoured, in ms; a longer one is clamped. Default Infinity: only the budget limits it. */
  maxRetryAfterMs: number;
  /**
   * Time budget for retrying, from the first attempt's start, in ms. No retry is scheduled
   * past it, and each retry's deadline is cut to what is left of it (0: never retry). The
   * first attempt always has the full attempt timeout. Default 600000 (10 min).
   */
  budgetMs: number;
}

/**
 * The one declaration of the retry defaults: the configuration's `api.retry` takes its defaults
 * from here (src/config/schema.ts), so a library caller and `serve` retry alike. Six attempts
 * from 2 s wait 2, 4, 8, 16 and 32 s on average (about a minute, where the official client's
 * 5, 10, 20 s give up after 35 s), so a short outage of the service costs no batch.
 */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 6,
  baseDelayMs: 2_000,
  factor: 2,
  maxDelayMs: 60_000,
  jitter: 0.5,
  maxRetryAfterMs: Number.POSITIVE_INFINITY,
  budgetMs: 600_000,
});

/** Merges options over the defaults and validates them (0 means 0; nothing negative, nothing NaN). */
export function resolveRetryPolicy(options: Partial<RetryPolicy> = {}): RetryPolicy {
  const d = DEFAULT_RETRY_POLICY;
  const real = (key: Exclude<keyof RetryPolicy, 'maxAttempts'>, min: number, max?: number): number =>
    parseLimit(`retry.${key}`, options[key], d[key], { min, real: true, ...(max === undefined ? {} : { max }) });
  const clamp = options.maxRetryAfterMs ?? d.maxRetryAfterMs;
  return {
    maxAttempts: parseLimit('retry.maxAttempts', options.maxAttempts, d.maxAttempts),
    baseDelayMs: real('baseDelayMs', 0),
    factor: real('factor', 1),
    maxDelayMs: real('maxDelayMs', 0),
    jitter: real('jitter', 0, 1),
    // Infinity: no clamp; anything else a finite number >= 0.
    maxRetryAfterMs: clamp === Number.POSITIVE_INFINITY ? clamp : real('maxRetryAfterMs', 0),
    budgetMs: real('budgetMs', 0),
  };
}

/** Error codes that mean "the same request may succeed later". */
const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'MAILGATE_ERR_API_NETWORK',
  'MAILGATE_ERR_API_TIMEOUT',
  'MAILGATE_ERR_API_CONFLICT',
  'MAILGATE_ERR_API_RATE_LIMITED',
  'MAILGATE_ERR_API_SERVER',
]);

/** Node/undici error codes of failures before any response. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);
}

/** True when the failure is transient: retrying the identical request may succeed. */
export function isRetryable(err: unknown): boolean {
  if (err instanceof GatewayError) {
    if (RETRYABLE_CODES.has(err.code)) return true;
    return err.code === 'MAILGATE_ERR_API_HTTP' && err.status !== undefined && isRetryableStatus(err.status);
  }
  if (!(err instanceof Error)) return false;
  if (err.name === 'TimeoutError') return true;
  if (err.name === 'AbortError') return false; // cancelled by the caller: stop
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  // fetch wraps socket failures as TypeError('fetch failed', { cause })
  if (err instanceof TypeError && err.cause !== undefined) return isRetryable(err.cause);
  return false;
}

/**
 * A `Retry-After` header value in ms: delta-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (!/[a-z]/i.test(text) || !Number.isFinite(at)) return undefined;
  return Math.max(0, at - now);
}

/** The server's requested wait carried by an error, if any. */
function retryAfterOf(err: unknown): number | undefined {
  const ms = (err as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/**
 * Wait in ms before the attempt after `attempt` (1-based: the attempt that just failed):
 * d = min(maxDelayMs, baseDelayMs · factor^(attempt−1)), spread uniformly over
 * [d·(1−jitter), d·(1+jitter)), floored by a (capped) `Retry-After`. `random` returns [0, 1).
 */
export function delayFor(attempt: number, err: unknown, policy: RetryPolicy, random: () => number = Math.random): number {
  const backoff = {
    baseMs: policy.baseDelayMs,
    capMs: policy.maxDelayMs,
    factor: policy.factor,
    maxExponent: Infinity,
    jitter: { spread: policy.jitter },
  };
  return atLeast(Math.floor(backoffDelay(attempt - 1, backoff, random)), retryAfterOf(err), policy.maxRetryAfterMs);
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: 'not-retryable' | 'attempts' | 'budget' };

/**
 * Whether to retry after attempt `attempt` failed with `err`, `elapsedMs` after the first
 * attempt started: retryable, attempts left, and the wait ends within the budget.
 */
export function decideRetry(
  attempt: number,
  err: unknown,
  elapsedMs: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): RetryDecision {
  if (!isRetryable(err)) return { retry: false, reason: 'not-retryable' };
  if (attempt >= policy.maxAttempts) return { retry: false, reason: 'attempts' };
  const delayMs = delayFor(attempt, err, policy, random);
  if (elapsedMs + delayMs >= policy.budgetMs) return { retry: false, reason: 'budget' };
  return { retry: true, delayMs };
}
