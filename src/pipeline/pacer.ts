/**
 * Paces the opening of mailbox connections across the process — IMAP connects and logins, a
 * Graph mailbox's token and first requests — whatever kind the mailbox is: at most
 * `concurrency` connects/logins in flight and at most `perSecond` started per second (a token
 * bucket whose burst is `concurrency`). First connects and reconnects draw from the same
 * bucket, so a restart of mailgate or of the IMAP server (every connection drops at once)
 * becomes a steady ramp instead of a thundering herd of TCP handshakes, logins and first syncs.
 *
 * Waiters are served in arrival order; one timer serves the whole queue. The clock is a
 * parameter so tests can drive it.
 */
import { parseLimit } from '../limits.js';

export interface PacerLimits {
  /** Connection attempts (TCP, greeting, STARTTLS, token request, login) in flight at once. */
  concurrency: number;
  /** Attempts started per second, on average; bursts up to `concurrency`. */
  perSecond: number;
}

/** 1,000 accounts are connected in about 25 s at most; a burst of 16 fits any IMAP server's per-IP login limits. */
export const PACING: Readonly<PacerLimits> = Object.freeze({ concurrency: 16, perSecond: 40 });

export interface PacerClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

const systemClock: PacerClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t as NodeJS.Timeout),
};

/** Gives the permit back; calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
}

export function checkPacing(limits: PacerLimits): PacerLimits {
  return {
    concurrency: parseLimit('connect concurrency', limits.concurrency, PACING.concurrency),
    perSecond: parseLimit('connects per second', limits.perSecond, PACING.perSecond, { min: Number.MIN_VALUE, real: true }),
  };
}

export class ConnectionPacer {
  readonly limits: Readonly<PacerLimits>;
  private tokens: number;
  private refilledAt: number;
  private active = 0;
  private peak = 0;
  private granted = 0;
  private readonly queue: Waiter[] = [];
  private timer: unknown;

  constructor(
    limits: PacerLimits = PACING,
    private readonly clock: PacerClock = systemClock,
  ) {
    this.limits = Object.freeze(checkPacing(limits));
    this.tokens = this.limits.concurrency;
    this.refilledAt = clock.now();
  }

  /** Attempts holding a permit now. */
  get inFlight(): number {
    return this.active;
  }

  /** Most attempts ever in flight at once. */
  get peakInFlight(): number {
    return this.peak;
  }

  /** Permits handed out since the start. */
  get grants(): number {
    return this.granted;
  }

  /** Attempts waiting for a permit. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Resolves with a release function once this attempt may start; rejects with the signal's
   * reason when it aborts first (the waiter leaves the queue and takes no permit).
   */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<Release>((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        reject(abortReason(signal!));
      };
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
      this.pump();
    });
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.limits.concurrency, this.tokens + ((now - this.refilledAt) * this.limits.perSecond) / 1000);
    this.refilledAt = now;
  }

  /** Grants permits while the queue, the bucket and the in-flight bound allow; else waits for a token. */
  private pump(): void {
    this.refill();
    while (this.queue.length > 0 && this.active < this.limits.concurrency && this.tokens >= 1) {
      this.tokens -= 1;
      this.active += 1;
      this.granted += 1;
      this.peak = Math.max(this.peak, this.active);
      this.queue.shift()!.grant(this.releaser());
    }
    // Blocked by the in-flight bound: a release pumps again. Blocked by the bucket: one timer.
    if (this.queue.length === 0 || this.active >= this.limits.concurrency || this.timer !== undefined) return;
    const ms = Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.limits.perSecond));
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, ms);
  }

  private releaser(): Release {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active -= 1;
      this.pump();
    };
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

let shared: ConnectionPacer | undefined;

/** The pacer every IMAP account of this process shares (built at first use, with PACING unless set). */
export function processPacer(): ConnectionPacer {
  return (shared ??= new ConnectionPacer(PACING));
}

/**
 * Sets the limits of the process-wide pacer (before the accounts start connecting); attempts
 * already waiting keep their place in the old one.
 */
export function setProcessPacing(limits: PacerLimits): ConnectionPacer {
  shared = new ConnectionPacer(limits);
  return shared;
}
