/**
 * Requests of one mailbox to Graph: every one with `Prefer: IdType="ImmutableId"` and a token
 * from the shared cache, through the mailbox's limiter (in-flight slots, the 10-minute window,
 * Retry-After). A 401 gets one token renewal and one retry; 429/503/504 pause the whole mailbox
 * for their Retry-After and are retried; network errors and other 5xx are retried a few times
 * with backoff. What keeps failing is a GatewayError with the mailbox error code (403, 404 and a
 * 401 after renewal each their own).
 */
import { GatewayError, type ErrorCode } from '../../src/errors.js';
import { atLeast, backoffDelay, type Backoff } from '../../src/retry.js';
import type { TokenCache } from '../../src/tokens.js';
import { sleep } from '../../src/pipeline/sleep.js';
import type { MailboxLimiter } from './limiter.js';

export interface GraphResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

export interface RequestOptions {
  method?: string;
  /** JSON body. */
  json?: unknown;
  /** More `Prefer` preferences, e.g. `odata.maxpagesize=100`. */
  prefer?: string[];
  /** Slots the request takes (a `$batch`: one per member it carries). Default 1. */
  slots?: number;
  signal: AbortSignal;
}

/** A Graph error answer: its status and `error.code`. */
export class GraphHttpError extends GatewayError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly httpStatus: number,
    readonly graphCode: string | undefined,
  ) {
    super(code, message, { status: httpStatus });
  }
}

export const THROTTLE_STATUSES = new Set([429, 503, 504]);
/** Without a Retry-After: 10 s doubling to 2 minutes. */
const THROTTLE_BACKOFF: Backoff = { baseMs: 10_000, capMs: 120_000, jitter: 'equal' };
const TRANSIENT_BACKOFF: Backoff = { baseMs: 500, capMs: 10_000, jitter: 'full' };
const MAX_THROTTLE_WAITS = 12;
const MAX_TRANSIENT_RETRIES = 3;
/** Retry-After larger than this is clamped (a misbehaving answer must not park a mailbox for days). */
const MAX_RETRY_AFTER_MS = 15 * 60_000;

export function retryAfterMs(headers: { get(name: string): string | null }): number | undefined {
  const v = headers.get('retry-after');
  if (v === null) return undefined;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.min(Math.max(s, 0) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(at - Date.now(), 0), MAX_RETRY_AFTER_MS);
}

/** The mailbox error code of a final answer. */
export function codeFor(status: number): ErrorCode {
  if (status === 401) return 'MAILGATE_ERR_GRAPH_UNAUTHORIZED';
  if (status === 403) return 'MAILGATE_ERR_GRAPH_FORBIDDEN';
  if (status === 404) return 'MAILGATE_ERR_GRAPH_NOT_FOUND';
  if (THROTTLE_STATUSES.has(status)) return 'MAILGATE_ERR_GRAPH_THROTTLED';
  if (status >= 500) return 'MAILGATE_ERR_GRAPH_UNAVAILABLE';
  return 'MAILGATE_ERR_GRAPH_RESPONSE';
}

export function graphErrorOf(status: number, body: Buffer, what: string): GraphHttpError {
  let graphCode: string | undefined;
  let message = body.toString('utf8').slice(0, 300);
  try {
    const e = (JSON.parse(body.toString('utf8')) as { error?: { code?: string; message?: string } }).error;
    graphCode = e?.code;
    if (e?.message) message = e.message;
  } catch {
    // not JSON: the text is the message
  }
  return new GraphHttpError(
    codeFor(status),
    `${what}: Graph answered ${status}${graphCode ? ` ${graphCode}` : ''}: ${message}`,
    status,
    graphCode,
  );
}

export interface ClientStats {
  /** HTTP requests sent (a `$batch` is one). */
  requests: number;
  /** Requests counted against the mailbox's limits (a `$batch` counts its members). */
  counted: number;
  throttled: number;
  renewals: number;
}

export class MailboxClient {
  readonly stats: ClientStats = { requests: 0, counted: 0, throttled: 0, renewals: 0 };
  /** Called with each throttling answer (health shows it). */
  onThrottle: (waitMs: number, status: number) => void = () => undefined;

  constructor(
    readonly graphUrl: string,
    readonly user: string,
    private readonly tokens: TokenCache,
    readonly limiter: MailboxLimiter,
    private readonly timeoutMs: number,
  ) {}

  /** Obtains (or finds cached) the entry's access token; the token endpoint's refusal rejects. */
  async token(signal: AbortSignal): Promise<void> {
    await this.tokens.get(signal);
  }

  /** `/users/{user}` + path, or an absolute link Graph gave (next/delta link). */
  url(pathOrLink: string): string {
    if (/^https?:\/\//.test(pathOrLink)) return pathOrLink;
    return `${this.graphUrl}/users/${encodeURIComponent(this.user)}${pathOrLink}`;
  }

  /** One request; resolves with a 2xx answer or a 410/4xx Graph error the caller decides on (thrown). */
  async request(pathOrLink: string, opts: RequestOptions): Promise<GraphResponse> {
    const url = pathOrLink === '$batch' ? `${this.graphUrl}/$batch` : this.url(pathOrLink);
    let renewed = false;
    let throttles = 0;
    let transient = 0;
    for (;;) {
      const res = await this.once(url, opts).catch(async (err: unknown) => {
        if (opts.signal.aborted || err instanceof GatewayError) throw err;
        if (transient >= MAX_TRANSIENT_RETRIES)
          throw new GatewayError('MAILGATE_ERR_GRAPH_UNAVAILABLE', `Graph could not be reached: ${(err as Error).message}`, { cause: err });
        await sleep(backoffDelay(transient++, TRANSIENT_BACKOFF), opts.signal);
        return undefined;
      });
      if (res === undefined) continue;
      if (res.status < 300) return res;
      if (res.status === 401 && !renewed) {
        renewed = true;
        this.stats.renewals += 1;
        this.tokens.invalidate(res.token);
        continue;
      }
      if (THROTTLE_STATUSES.has(res.status) && throttles < MAX_THROTTLE_WAITS) {
        this.throttled(res.headers, res.status, throttles++);
        continue;
      }
      if (res.status >= 500 && !THROTTLE_STATUSES.has(res.status) && transient < MAX_TRANSIENT_RETRIES) {
        await sleep(backoffDelay(transient++, TRANSIENT_BACKOFF), opts.signal);
        continue;
      }
      throw graphErrorOf(res.status, res.body, `${opts.method ?? 'GET'} ${new URL(url).pathname}`);
    }
  }

  /** A throttling answer pauses the whole mailbox for its Retry-After (or a backoff without one). */
  throttled(headers: { get(name: string): string | null }, status: number, attempt: number): void {
    const wait = atLeast(0, retryAfterMs(headers)) || backoffDelay(attempt, THROTTLE_BACKOFF);
    this.stats.throttled += 1;
    this.limiter.pause(Date.now() + wait);
    this.onThrottle(wait, status);
  }

  private async once(url: string, opts: RequestOptions): Promise<GraphResponse & { token: string }> {
    const slots = opts.slots ?? 1;
    const release = await this.limiter.acquire(slots, opts.signal);
    try {
      const token = await this.tokens.get(opts.signal);
      this.stats.requests += 1;
      this.stats.counted += slots;
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        prefer: ['IdType="ImmutableId"', ...(opts.prefer ?? [])].join(', '),
        accept: 'application/json',
      };
      if (opts.json !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(url, {
        method: opts.method ?? 'GET',
        headers,
        ...(opts.json === undefined ? {} : { body: JSON.stringify(opts.json) }),
        redirect: 'manual',
        signal: AbortSignal.any([opts.signal, AbortSignal.timeout(this.timeoutMs)]),
      });
      const body = Buffer.from(await res.arrayBuffer());
      return { status: res.status, headers: res.headers, body, token };
    } finally {
      release();
    }
  }
}
