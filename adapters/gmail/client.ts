/**
 * Requests of one mailbox to the Gmail API: each with a token from the mailbox's cache and the
 * quota units of its method taken from the mailbox's bucket first (quota.ts). A 401 gets one
 * token renewal and one retry; 429 and 403 `rateLimitExceeded`/`userRateLimitExceeded` pause the
 * whole mailbox for a jittered, growing backoff (a `Retry-After` is a floor) and are retried;
 * network errors and 5xx are retried a few times with backoff. What keeps failing is a
 * GatewayError with the mailbox error code (401 after renewal, 403, 404 each their own).
 */
import { GatewayError, type ErrorCode } from '../../src/errors.js';
import { sleep } from '../../src/pipeline/sleep.js';
import { atLeast, backoffDelay, type Backoff } from '../../src/retry.js';
import type { TokenCache } from '../../src/tokens.js';
import { UNITS, type GmailMethod, type QuotaBucket } from './quota.js';

/** A Gmail error answer: its status and the first `errors[].reason`. */
export class GmailHttpError extends GatewayError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly httpStatus: number,
    readonly reason: string | undefined,
  ) {
    super(code, message, { status: httpStatus });
  }
}

export const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded']);
/** Rate limits: 1 s doubling to 64 s, equal jitter (Google's advice: exponential backoff with jitter). */
export const RATE_BACKOFF: Backoff = { baseMs: 1_000, capMs: 64_000, jitter: 'equal' };
const TRANSIENT_BACKOFF: Backoff = { baseMs: 500, capMs: 10_000, jitter: 'full' };
const MAX_RATE_WAITS = 12;
const MAX_TRANSIENT_RETRIES = 3;
const MAX_RETRY_AFTER_MS = 15 * 60_000;

export interface ErrorBody {
  error?: { code?: number; message?: string; status?: string; errors?: Array<{ reason?: string; message?: string }> };
}

export function reasonOf(body: unknown): string | undefined {
  return (body as ErrorBody | undefined)?.error?.errors?.[0]?.reason;
}

/** A rate-limit answer: 429, or 403 with a rate-limit reason. */
export function isRateLimited(status: number, body: unknown): boolean {
  return status === 429 || (status === 403 && RATE_REASONS.has(reasonOf(body) ?? ''));
}

export function codeFor(status: number, body: unknown): ErrorCode {
  if (isRateLimited(status, body)) return 'MAILGATE_ERR_GMAIL_RATE_LIMITED';
  if (status === 401) return 'MAILGATE_ERR_GMAIL_UNAUTHORIZED';
  // 400 failedPrecondition: "Mail service not enabled" for the user.
  if (status === 403 || (status === 400 && reasonOf(body) === 'failedPrecondition')) return 'MAILGATE_ERR_GMAIL_FORBIDDEN';
  if (status === 404) return 'MAILGATE_ERR_GMAIL_NOT_FOUND';
  if (status >= 500) return 'MAILGATE_ERR_GMAIL_UNAVAILABLE';
  return 'MAILGATE_ERR_GMAIL_RESPONSE';
}

export function gmailError(status: number, body: unknown, what: string): GmailHttpError {
  const e = (body as ErrorBody | undefined)?.error;
  const reason = reasonOf(body);
  const message = e?.message ?? (typeof body === 'string' ? body.slice(0, 300) : 'no message');
  return new GmailHttpError(
    codeFor(status, body),
    `${what}: Gmail answered ${status}${reason ? ` ${reason}` : ''}: ${message}`,
    status,
    reason,
  );
}

export function retryAfterMs(headers: { get(name: string): string | null }): number | undefined {
  const v = headers.get('retry-after');
  if (v === null) return undefined;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.min(Math.max(s, 0) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(at - Date.now(), 0), MAX_RETRY_AFTER_MS);
}

/** The wait a rate-limit message names ("Retry after 2026-01-01T08:00:00.000Z"), clamped; undefined without one. */
export function retryAfterInMessage(body: unknown): number | undefined {
  const m = /Retry after (\S+)/i.exec((body as ErrorBody | undefined)?.error?.message ?? '');
  const at = m ? Date.parse(m[1]!) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.min(Math.max(at - Date.now(), 0), MAX_RETRY_AFTER_MS);
}

export interface ClientStats {
  /** HTTP requests sent (a batch is one). */
  requests: number;
  /** API calls (a batch counts its calls). */
  calls: number;
  /** Quota units spent. */
  units: number;
  rateLimited: number;
  renewals: number;
}

export interface CallOptions {
  method?: 'GET' | 'POST';
  query?: Record<string, string | number | string[] | undefined>;
  json?: unknown;
  signal: AbortSignal;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

export class GmailClient {
  readonly stats: ClientStats = { requests: 0, calls: 0, units: 0, rateLimited: 0, renewals: 0 };
  /** Called with each rate-limit answer (health and logs show it). */
  onRateLimit: (waitMs: number, status: number) => void = () => undefined;
  private rateStreak = 0;

  constructor(
    readonly apiUrl: string,
    readonly user: string,
    readonly tokens: TokenCache,
    readonly quota: QuotaBucket,
    private readonly timeoutMs: number,
  ) {}

  /** `/gmail/v1/users/{user}` — the path every call of this mailbox starts with. */
  get base(): string {
    return `/gmail/v1/users/${encodeURIComponent(this.user)}`;
  }

  async token(signal: AbortSignal): Promise<void> {
    await this.tokens.get(signal);
  }

  /** One API call: resolves with its JSON answer; a final error answer is thrown as GmailHttpError. */
  async call<T>(what: GmailMethod, path: string, opts: CallOptions): Promise<T> {
    const url = `${this.apiUrl}${this.base}${path}${queryString(opts.query)}`;
    const res = await this.send(url, UNITS[what], 1, opts, `${what} ${path.split('?')[0]}`);
    return (res.text === '' ? {} : JSON.parse(res.text)) as T;
  }

  /**
   * Sends one HTTP request costing `units` (a batch: the sum of its calls), with the renewal,
   * rate-limit and transient retries; resolves with a 2xx answer.
   */
  async send(
    url: string,
    units: number,
    calls: number,
    opts: CallOptions & { headers?: Record<string, string>; body?: string },
    what: string,
  ): Promise<RawResponse> {
    let renewed = false;
    let transient = 0;
    let waits = 0;
    for (;;) {
      const answered = await this.quota.take(units, opts.signal);
      let res: RawResponse & { token: string };
      try {
        res = await this.once(url, units, calls, opts).finally(answered);
      } catch (err) {
        if (opts.signal.aborted || err instanceof GatewayError) throw err;
        if (transient >= MAX_TRANSIENT_RETRIES)
          throw new GatewayError('MAILGATE_ERR_GMAIL_UNAVAILABLE', `${what}: Gmail could not be reached: ${(err as Error).message}`, {
            cause: err,
          });
        await sleep(backoffDelay(transient++, TRANSIENT_BACKOFF), opts.signal);
        continue;
      }
      if (res.status < 300) {
        this.rateStreak = 0;
        return res;
      }
      const body = parseJson(res.text);
      if (res.status === 401 && !renewed) {
        renewed = true;
        this.stats.renewals += 1;
        this.tokens.invalidate(res.token);
        continue;
      }
      if (isRateLimited(res.status, body) && waits < MAX_RATE_WAITS) {
        waits += 1;
        this.rateLimited(res.headers, res.status, body);
        continue;
      }
      if (res.status >= 500 && transient < MAX_TRANSIENT_RETRIES) {
        await sleep(backoffDelay(transient++, TRANSIENT_BACKOFF), opts.signal);
        continue;
      }
      throw gmailError(res.status, body ?? res.text, what);
    }
  }

  /**
   * A rate-limit answer pauses the whole mailbox: a growing, jittered wait. A `Retry-After`
   * header, or the time in Gmail's "User-rate limit exceeded. Retry after <time>", is a floor.
   */
  rateLimited(headers: { get(name: string): string | null }, status: number, body?: unknown): void {
    const floor = Math.max(retryAfterMs(headers) ?? 0, retryAfterInMessage(body) ?? 0);
    const wait = atLeast(backoffDelay(this.rateStreak++, RATE_BACKOFF), floor);
    this.stats.rateLimited += 1;
    this.quota.pause(Date.now() + wait);
    this.onRateLimit(wait, status);
  }

  /** A batch's calls all came back: the streak of rate limits is over. */
  settled(): void {
    this.rateStreak = 0;
  }

  private async once(
    url: string,
    units: number,
    calls: number,
    opts: CallOptions & { headers?: Record<string, string>; body?: string },
  ): Promise<RawResponse & { token: string }> {
    const token = await this.tokens.get(opts.signal);
    this.stats.requests += 1;
    this.stats.calls += calls;
    this.stats.units += units;
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json', ...opts.headers };
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    const res = await fetch(url, {
      method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: 'manual',
      signal: AbortSignal.any([opts.signal, AbortSignal.timeout(this.timeoutMs)]),
    });
    return { status: res.status, headers: res.headers, text: await res.text(), token };
  }
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function queryString(q: CallOptions['query']): string {
  if (q === undefined) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) p.append(k, String(one));
  }
  const s = p.toString();
  return s === '' ? '' : `?${s}`;
}
