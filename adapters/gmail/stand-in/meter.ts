/**
 * Per-user quota accounting of the stand-in, as Google documents it (developers.google.com/
 * workspace/gmail/api/reference/quota): each call costs its method's units (each call of a batch
 * on its own), a user may spend 250 units per second as a moving average and 15,000 per minute;
 * beyond either the call is refused with 429 `rateLimitExceeded` ("User-rate limit exceeded").
 * The moving average's window is not documented: one second is assumed. Everything is measured:
 * units spent, the most units spent in any one second, refusals. Injected faults answer the next
 * calls with 429 or 403 and a rate-limit reason.
 */

export interface MeterLimits {
  perSecond: number;
  perMinute: number;
}

export interface UserStats {
  calls: number;
  units: number;
  /** The most units spent in any sliding second (the limit holds it at `perSecond`). */
  maxUnitsPerSecond: number;
  /** Calls refused with a rate limit (injected or over a limit). */
  rateLimited: number;
  /** Of those, refused for going over a limit (not injected). */
  overLimit: number;
}

export interface Fault {
  count: number;
  status: 429 | 403;
  reason: 'rateLimitExceeded' | 'userRateLimitExceeded';
}

export interface MeterReply {
  status: number;
  body: unknown;
}

export function rateError(status: number, reason: string, message: string): MeterReply {
  return {
    status,
    body: {
      error: {
        code: status,
        message,
        errors: [{ message, domain: 'usageLimits', reason }],
        status: status === 429 ? 'RESOURCE_EXHAUSTED' : 'PERMISSION_DENIED',
      },
    },
  };
}

export class Meter {
  readonly stats: UserStats = { calls: 0, units: 0, maxUnitsPerSecond: 0, rateLimited: 0, overLimit: 0 };
  private readonly log: Array<[number, number]> = [];
  private readonly faults: Fault[] = [];

  constructor(private readonly limits: MeterLimits) {}

  inject(fault: Fault): void {
    this.faults.push({ ...fault });
  }

  private sum(since: number): number {
    let s = 0;
    for (let i = this.log.length - 1; i >= 0 && this.log[i]![0] > since; i--) s += this.log[i]![1];
    return s;
  }

  /** Admits a call of `units` (undefined) or answers the refusal. */
  admit(units: number): MeterReply | undefined {
    const now = Date.now();
    this.stats.calls += 1;
    const fault = this.faults[0];
    if (fault !== undefined) {
      if (--fault.count <= 0) this.faults.shift();
      this.stats.rateLimited += 1;
      return rateError(
        fault.status,
        fault.reason,
        fault.reason === 'userRateLimitExceeded' ? 'User Rate Limit Exceeded' : 'Rate Limit Exceeded',
      );
    }
    while (this.log.length > 0 && this.log[0]![0] <= now - 60_000) this.log.shift();
    const second = this.sum(now - 1000);
    if (second + units > this.limits.perSecond || this.sum(now - 60_000) + units > this.limits.perMinute) {
      this.stats.rateLimited += 1;
      this.stats.overLimit += 1;
      const retry = new Date(now + 1000).toISOString();
      return rateError(429, 'rateLimitExceeded', `User-rate limit exceeded.  Retry after ${retry}`);
    }
    this.log.push([now, units]);
    this.stats.units += units;
    this.stats.maxUnitsPerSecond = Math.max(this.stats.maxUnitsPerSecond, second + units);
    return undefined;
  }
}
