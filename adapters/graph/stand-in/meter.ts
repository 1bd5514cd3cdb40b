/**
 * Per-mailbox accounting of the stand-in, as Graph throttles Outlook resources
 * (learn.microsoft.com/graph/throttling-limits, "Outlook service limits"): at most 4 requests in
 * flight per app and mailbox (each request inside a `$batch` counts), at most 10,000 requests
 * per 10 minutes, and a 429 with `Retry-After` beyond either. Injected faults answer the next
 * requests with a status and a `Retry-After`. Everything is measured: the highest number in
 * flight, and requests that arrived before an announced `Retry-After` had passed.
 */
import type { GraphReply } from './resources.js';
import { graphError } from './resources.js';

export interface MeterLimits {
  concurrency: number;
  requests: number;
  windowMs: number;
  /** Time each request takes inside the mailbox, in ms (so that overlapping requests overlap). */
  latencyMs: number;
}

export interface MailboxStats {
  /** Requests that reached the mailbox (HTTP requests and `$batch` members). */
  requests: number;
  inFlight: number;
  maxInFlight: number;
  /** Answered 429/503/504 (injected, over the rate, or over the concurrency). */
  throttled: number;
  /** Requests refused for exceeding the in-flight limit. */
  overConcurrency: number;
  /** Requests that arrived while an announced Retry-After was still running. */
  early: number;
  /** Requests without `Prefer: IdType="ImmutableId"`. */
  withoutImmutableId: number;
}

interface Fault {
  count: number;
  status: number;
  retryAfterS: number;
}

export class Meter {
  readonly stats: MailboxStats = {
    requests: 0,
    inFlight: 0,
    maxInFlight: 0,
    throttled: 0,
    overConcurrency: 0,
    early: 0,
    withoutImmutableId: 0,
  };
  private readonly times: number[] = [];
  private retryUntil = 0;
  private announcedAt = 0;
  private faults: Fault[] = [];

  constructor(private readonly limits: MeterLimits) {}

  inject(fault: Fault): void {
    this.faults.push({ ...fault });
  }

  /**
   * Runs one request. `arrivedAt`: when the HTTP request carrying it arrived (members of one
   * `$batch` arrive together: a member refused after a sibling was throttled is not early).
   */
  async run(arrivedAt: number, immutable: boolean, fn: () => Promise<GraphReply> | GraphReply): Promise<GraphReply> {
    const now = Date.now();
    const s = this.stats;
    s.requests += 1;
    if (!immutable) s.withoutImmutableId += 1;
    if (now < this.retryUntil) {
      if (arrivedAt >= this.announcedAt) s.early += 1;
      return this.throttle(429, Math.ceil((this.retryUntil - now) / 1000), 'ApplicationThrottled', 'Retry-After has not passed yet.');
    }
    const fault = this.faults[0];
    if (fault !== undefined) {
      fault.count -= 1;
      if (fault.count <= 0) this.faults.shift();
      return this.throttle(
        fault.status,
        fault.retryAfterS,
        fault.status === 429 ? 'ApplicationThrottled' : 'ServiceUnavailable',
        'Injected.',
      );
    }
    while (this.times.length > 0 && this.times[0]! <= now - this.limits.windowMs) this.times.shift();
    if (this.times.length >= this.limits.requests) {
      const wait = Math.ceil((this.times[0]! + this.limits.windowMs - now) / 1000);
      return this.throttle(429, wait, 'ApplicationThrottled', 'MailboxRateLimit: too many requests in the window.');
    }
    this.times.push(now);
    s.inFlight += 1;
    s.maxInFlight = Math.max(s.maxInFlight, s.inFlight);
    try {
      if (s.inFlight > this.limits.concurrency) {
        s.overConcurrency += 1;
        return this.throttle(429, 1, 'ApplicationThrottled', 'Application is over its MailboxConcurrency limit.');
      }
      if (this.limits.latencyMs > 0) await new Promise((r) => setTimeout(r, this.limits.latencyMs));
      return await fn();
    } finally {
      s.inFlight -= 1;
    }
  }

  private throttle(status: number, retryAfterS: number, code: string, message: string): GraphReply {
    this.stats.throttled += 1;
    this.announcedAt = Date.now();
    this.retryUntil = Math.max(this.retryUntil, Date.now() + retryAfterS * 1000);
    return graphError(status, code, message, { 'retry-after': String(retryAfterS) });
  }
}
