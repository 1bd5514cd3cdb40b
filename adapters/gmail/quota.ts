/**
 * What one mailbox may spend of Google's per-user quota (developers.google.com/workspace/gmail/
 * api/reference/quota): every method costs quota units (messages.get 5, messages.list 5,
 * history.list 2, …; each call inside a batch counts), and a user may spend 250 units per second
 * as a moving average and 15,000 units per minute. Both are held here, as sliding windows of
 * the units spent: a request of n units starts only when the last second's units plus n stay
 * within the per-second limit and the last minute's within the per-minute limit. (A classic
 * token bucket would let its whole capacity through on top of its rate at any instant; the
 * windows are what Google measures, so the windows are what is held.) A rate-limit answer pauses
 * the whole mailbox (`pause`). Waiters are served in arrival order.
 */
import { sleep } from '../../src/pipeline/sleep.js';

/** Quota units of the methods mailgate calls (Google's table). */
export const UNITS = {
  getProfile: 1,
  'labels.list': 1,
  'labels.get': 1,
  'labels.create': 5,
  'messages.list': 5,
  'messages.get': 5,
  'messages.modify': 5,
  'messages.batchModify': 50,
  'history.list': 2,
  watch: 100,
  stop: 50,
} as const;

export type GmailMethod = keyof typeof UNITS;

const SECOND_MS = 1000;

export interface QuotaLimits {
  perSecond: number;
  perMinute: number;
  /** The clock (tests drive it). Default Date.now and a real sleep. */
  clock?: { now(): number; sleep(ms: number, signal: AbortSignal): Promise<void> };
}

export class QuotaBucket {
  /** Spend log: [time, units], oldest first, at most a minute old. */
  private readonly log: Array<[number, number]> = [];
  private queue: Promise<void> = Promise.resolve();
  private pausedUntil = 0;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Units spent since the start. */
  spent = 0;

  constructor(readonly limits: QuotaLimits) {
    this.now = limits.clock ? () => limits.clock!.now() : Date.now;
    this.sleep = limits.clock ? (ms, signal) => limits.clock!.sleep(ms, signal) : sleep;
  }

  /** Nothing is sent before `until` (epoch ms): a rate-limit answer's backoff. */
  pause(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until);
  }

  get pausedMs(): number {
    return Math.max(0, this.pausedUntil - this.now());
  }

  /**
   * Resolves once `units` may be spent now (and counts them spent), with a function to call when
   * the request's answer has arrived: Google counted the units at some instant between sending
   * and answering, so the units are then counted from the answer's time — the latest instant
   * Google can have counted them — and the next request's window never overlaps them, however
   * long either took to travel. A request larger than a window's limit waits for an empty window
   * (callers size batches to fit: `fits`).
   */
  take(units: number, signal: AbortSignal): Promise<() => void> {
    const turn = this.queue.then(() => this.admit(units, signal));
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  /** Moves a spend to now, keeping the log in time order. */
  private answered(entry: [number, number]): void {
    const at = this.log.indexOf(entry);
    if (at < 0) return;
    this.log.splice(at, 1);
    entry[0] = Math.max(entry[0], this.now());
    let i = this.log.length;
    while (i > 0 && this.log[i - 1]![0] > entry[0]) i--;
    this.log.splice(i, 0, entry);
  }

  /** Calls of `unitsEach` that fit one second's limit. */
  fits(unitsEach: number): number {
    return Math.max(1, Math.floor(this.limits.perSecond / unitsEach));
  }

  private sum(since: number): number {
    let s = 0;
    for (let i = this.log.length - 1; i >= 0 && this.log[i]![0] > since; i--) s += this.log[i]![1];
    return s;
  }

  private async admit(units: number, signal: AbortSignal): Promise<() => void> {
    for (;;) {
      signal.throwIfAborted();
      const now = this.now();
      if (now < this.pausedUntil) {
        await this.sleep(this.pausedUntil - now, signal);
        continue;
      }
      while (this.log.length > 0 && this.log[0]![0] <= now - 60_000) this.log.shift();
      const wait = Math.max(
        this.waitFor(now, SECOND_MS, Math.min(units, this.limits.perSecond), this.limits.perSecond),
        this.waitFor(now, 60_000, Math.min(units, this.limits.perMinute), this.limits.perMinute),
      );
      if (wait > 0) {
        await this.sleep(wait, signal);
        continue;
      }
      const entry: [number, number] = [now, units];
      this.log.push(entry);
      this.spent += units;
      return () => this.answered(entry);
    }
  }

  /** How long until `units` more fit the window of `windowMs` holding at most `limit`; 0: now. */
  private waitFor(now: number, windowMs: number, units: number, limit: number): number {
    let inWindow = this.sum(now - windowMs);
    if (inWindow + units <= limit) return 0;
    // The oldest entries of the window leave it first: wait until enough have left.
    for (const [t, u] of this.log) {
      if (t <= now - windowMs) continue;
      inWindow -= u;
      if (inWindow + units <= limit) return Math.max(1, t + windowMs - now + 1);
    }
    return windowMs;
  }
}
