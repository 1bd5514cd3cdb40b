/**
 * What an IMAP failure means and how long to wait before the next attempt: a pure table,
 * tested on its own (no clocks, the random source is a parameter).
 */
import { GatewayError, isGatewayError, type ErrorCode } from '../../src/errors.js';
import { atLeast, backoffDelay as jittered } from '../../src/retry.js';

export type FailureKind = 'auth' | 'throttle' | 'transient';

export interface Failure {
  kind: FailureKind;
  code: ErrorCode;
  message: string;
  /** Server-suggested wait (MS365 "Suggested Backoff Time"), when there is one. */
  hintMs?: number;
}

interface ImapLikeError {
  code?: unknown;
  authenticationFailed?: unknown;
  serverResponseCode?: unknown;
  responseText?: unknown;
  responseStatus?: unknown;
  throttleReset?: unknown;
  message?: unknown;
}

const THROTTLE_CODES = new Set(['THROTTLED', 'LIMIT', 'INUSE', 'UNAVAILABLE']);
// Servers say "slow down" in words only: Gmail "Too many simultaneous connections", Yahoo
// "[LIMIT] Rate limit hit", MS365 "Request is throttled". Matching text is the only signal.
const THROTTLE_TEXT = /too many|throttl|rate limit|try again later|server busy/i;

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** `serverText`: anything else the server said (e.g. the reason of a BYE). */
export function classify(err: unknown, serverText = ''): Failure {
  if (isGatewayError(err)) {
    // A token endpoint that answers 4xx refuses the grant; unreachable or 5xx is transient.
    const refused = err.code === 'MAILGATE_ERR_IMAP_OAUTH_TOKEN' && err.status !== undefined && err.status >= 400 && err.status < 500;
    const kind: FailureKind =
      err.code === 'MAILGATE_ERR_IMAP_AUTH' || refused ? 'auth' : err.code === 'MAILGATE_ERR_IMAP_THROTTLED' ? 'throttle' : 'transient';
    const hint = err.details?.['hintMs'];
    return typeof hint === 'number'
      ? { kind, code: err.code, message: err.message, hintMs: hint }
      : { kind, code: err.code, message: err.message };
  }
  const e = (typeof err === 'object' && err !== null ? err : {}) as ImapLikeError;
  const message = text(e.message) || String(err);
  const words = `${text(e.responseText)} ${message} ${serverText}`;
  const serverCode = text(e.serverResponseCode).toUpperCase();
  if (e.code === 'ETHROTTLE' || THROTTLE_CODES.has(serverCode) || THROTTLE_TEXT.test(words)) {
    const hint = typeof e.throttleReset === 'number' ? e.throttleReset : undefined;
    return hint === undefined
      ? { kind: 'throttle', code: 'MAILGATE_ERR_IMAP_THROTTLED', message }
      : { kind: 'throttle', code: 'MAILGATE_ERR_IMAP_THROTTLED', message, hintMs: hint };
  }
  if (e.authenticationFailed === true || serverCode === 'AUTHENTICATIONFAILED' || serverCode === 'AUTHORIZATIONFAILED') {
    return { kind: 'auth', code: 'MAILGATE_ERR_IMAP_AUTH', message };
  }
  if (e.code === 'ETIMEOUT' || e.code === 'CONNECT_TIMEOUT' || e.code === 'GREETING_TIMEOUT') {
    return { kind: 'transient', code: 'MAILGATE_ERR_IMAP_TIMEOUT', message };
  }
  if (e.responseStatus === 'NO' || e.responseStatus === 'BAD') {
    return { kind: 'transient', code: 'MAILGATE_ERR_IMAP_COMMAND', message };
  }
  return { kind: 'transient', code: 'MAILGATE_ERR_IMAP_CONNECTION', message };
}

/** Base and ceiling of the exponential backoff per kind, in milliseconds. */
export const BACKOFF: Record<FailureKind, { baseMs: number; capMs: number }> = {
  transient: { baseMs: 1_000, capMs: 60_000 },
  throttle: { baseMs: 30_000, capMs: 300_000 },
  auth: { baseMs: 60_000, capMs: 1_800_000 },
};

/** A server hint is honoured up to this bound (MS365 suggests ~300 s). */
export const MAX_HINT_MS = 900_000;

/**
 * How the wait is spread per kind. A transient failure usually hits every account at once (the
 * server restarted, the network dropped): full jitter, uniform over [0, d), spreads them widest,
 * and the connection pacer (pacer.ts) bounds whatever still arrives together. Throttling and a
 * refused login keep a floor of half the wait ("equal jitter"): the server asked for less traffic.
 */
export const JITTER: Record<FailureKind, 'full' | 'equal'> = { transient: 'full', throttle: 'equal', auth: 'equal' };

/** Delay before attempt `attempt` (0 = first retry): exponential, capped, jittered per kind (JITTER). */
export function backoffDelay(
  attempt: number,
  failure: Pick<Failure, 'kind' | 'hintMs'>,
  random: () => number = Math.random,
  table: Record<FailureKind, { baseMs: number; capMs: number }> = BACKOFF,
): number {
  const backoff = { ...table[failure.kind], jitter: JITTER[failure.kind] };
  return Math.round(atLeast(jittered(attempt, backoff, random), failure.hintMs, MAX_HINT_MS));
}

/** Rejects with MAILGATE_ERR_IMAP_TIMEOUT after `ms`, running `onExpire` (e.g. drop the socket). */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string, onExpire: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new GatewayError('MAILGATE_ERR_IMAP_TIMEOUT', `${what} exceeded its deadline of ${ms} ms`);
  let fired = false;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      fired = true;
      onExpire();
      reject(timeout);
    }, ms);
  });
  try {
    return await Promise.race([work, expired]);
  } catch (err) {
    // onExpire() may make `work` fail first (closing the socket): the cause is still the deadline.
    throw fired ? timeout : err;
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined);
  }
}
