/**
 * One HTTP exchange with deadline and classification (attempt), and the retry loop around it
 * (send). Every failure leaves here as an ApiError with a stable code; when retries run out,
 * the last failure's own code stays (a 429 stays RATE_LIMITED) and `exhausted` says why.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { ApiError, readEnvelope } from './errors.js';
import type { HttpFetch } from './http.js';
import type { Endpoint } from './paths.js';
import { decideRetry, type RetryPolicy } from './retry.js';

export interface AttemptInfo {
  endpoint: Endpoint;
  /** 1-based. */
  attempt: number;
  durationMs: number;
  /** HTTP status, when a response arrived. */
  status?: number;
  /** Set when the attempt failed. */
  error?: ApiError;
  /** Set when another attempt follows after this wait. */
  retryInMs?: number;
  /** Request body bytes. */
  bytes: number;
}

export interface HttpCall {
  fetch: HttpFetch;
  headers: Record<string, string>;
  timeoutMs: number;
  policy: RetryPolicy;
  random: () => number;
  onAttempt: ((info: AttemptInfo) => void) | undefined;
}

export interface HttpRequest {
  endpoint: Endpoint;
  method: string;
  url: string;
  body: string | undefined;
  signal: AbortSignal | undefined;
  onAttempt?: ((info: AttemptInfo) => void) | undefined;
  /** Failures that are this endpoint's answer rather than a transient state: not retried. */
  final?: (err: ApiError) => boolean;
}

/**
 * Validates a successful body; throws an ApiError (BAD_RESPONSE) when it is not what the
 * endpoint promises. Not retried: the service answered 2xx, so it processed the request.
 */
export type Check<T> = (status: number, body: Record<string, unknown>) => T;

function aborted(signal: AbortSignal | undefined, attempts: number, cause?: unknown): ApiError {
  return new ApiError('MAILGATE_ERR_API_ABORTED', 'request cancelled by the caller', { cause: cause ?? signal?.reason, attempts });
}

/** Describes a fetch failure without echoing request headers. */
function networkError(err: unknown): ApiError {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = (cause as { code?: unknown } | null)?.code;
  const text = cause instanceof Error ? cause.message : String(cause);
  return new ApiError('MAILGATE_ERR_API_NETWORK', `network error${typeof code === 'string' ? ` ${code}` : ''}: ${text}`, { cause: err });
}

/** One attempt with a deadline of `deadlineMs` (the attempt timeout, or less when the retry budget has less left). */
async function attempt<T>(call: HttpCall, req: HttpRequest, check: Check<T>, deadlineMs: number): Promise<{ value: T; status: number }> {
  const deadline = AbortSignal.timeout(deadlineMs);
  const signal = req.signal === undefined ? deadline : AbortSignal.any([deadline, req.signal]);
  let status: number | undefined;
  try {
    // redirect: 'manual': a 3xx is an answer, never followed with the bearer token and the body.
    const res = await call.fetch(req.url, { method: req.method, headers: call.headers, body: req.body, redirect: 'manual', signal });
    status = res.status;
    const text = await res.text(); // same signal: the deadline covers the body too
    const envelope = readEnvelope(res.status, text, res.headers.get('retry-after'), Date.now());
    if (!envelope.ok) throw envelope.error;
    return { value: check(res.status, envelope.body), status: res.status };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (req.signal?.aborted === true) throw aborted(req.signal, 0, err);
    if (deadline.aborted) {
      const phase = status === undefined ? 'waiting for the response' : `reading the ${status} response body`;
      const limit = deadlineMs < call.timeoutMs ? `${deadlineMs} ms, what was left of the retry budget` : `${deadlineMs} ms`;
      throw new ApiError('MAILGATE_ERR_API_TIMEOUT', `no complete answer within ${limit} (${phase})`, { status, cause: err });
    }
    throw networkError(err);
  }
}

/** The last failure, with its own code, once no retry is left; `cause` is the last failure itself. */
function exhausted(last: ApiError, attempts: number, reason: 'attempts' | 'budget'): ApiError {
  const why = reason === 'attempts' ? `after ${attempts} attempts` : `after ${attempts} attempts, the retry time budget spent`;
  return new ApiError(last.code, `${last.message} (gave up ${why})`, {
    status: last.status,
    apiMessage: last.apiMessage,
    retryAfterMs: last.retryAfterMs,
    bodySnippet: last.bodySnippet,
    cause: last,
    attempts,
    exhausted: reason,
  });
}

/** Sends with retries; resolves with the checked body or rejects with an ApiError. */
export async function send<T>(call: HttpCall, req: HttpRequest, check: Check<T>): Promise<T> {
  const started = Date.now();
  const bytes = req.body === undefined ? 0 : Buffer.byteLength(req.body);
  const report = (info: AttemptInfo): void => {
    call.onAttempt?.(info);
    req.onAttempt?.(info);
  };
  for (let n = 1; ; n++) {
    if (req.signal?.aborted === true) throw aborted(req.signal, n - 1);
    const t0 = Date.now();
    // A retry never runs past the budget: its deadline is cut to what is left of it.
    const left = Math.max(1, Math.ceil(call.policy.budgetMs - (t0 - started)));
    try {
      const { value, status } = await attempt(call, req, check, n === 1 ? call.timeoutMs : Math.min(call.timeoutMs, left));
      report({ endpoint: req.endpoint, attempt: n, durationMs: Date.now() - t0, status, bytes });
      return value;
    } catch (thrown) {
      const err = thrown instanceof ApiError ? thrown : networkError(thrown);
      const decision =
        req.final?.(err) === true
          ? { retry: false as const, reason: 'not-retryable' as const }
          : decideRetry(n, err, Date.now() - started, call.policy, call.random);
      const info: AttemptInfo = { endpoint: req.endpoint, attempt: n, durationMs: Date.now() - t0, error: err, bytes };
      if (err.status !== undefined) info.status = err.status;
      if (decision.retry) info.retryInMs = decision.delayMs;
      report(info);
      if (!decision.retry) throw decision.reason === 'not-retryable' ? err : exhausted(err, n, decision.reason);
      try {
        await delay(decision.delayMs, undefined, { signal: req.signal });
      } catch {
        throw aborted(req.signal, n); // the only rejection is the caller's abort; its reason is the cause
      }
    }
  }
}
