/**
 * What one mailbox may send to Graph, as Graph documents its Outlook limits
 * (learn.microsoft.com/graph/throttling-limits): at most `concurrency` requests in flight (a
 * `$batch` takes one slot per request it carries, since Graph runs them against the same limit),
 * at most `perWindow` requests in any `windowMs` (again counting batch members), and nothing at
 * all while a `Retry-After` the mailbox was given is running. Waiters are served in arrival order.
 */
import { sleep } from '../../src/pipeline/sleep.js';

export interface LimiterOptions {
  concurrency: number;
  perWindow: number;
  windowMs: number;
  now?: () => number;
}

export class MailboxLimiter {
  private inFlight = 0;
  private readonly queue: Array<{ n: number; resolve: () => void }> = [];
  /** Send times of the requests of the current window (one entry per counted request). */
  private readonly sent: number[] = [];
  private pausedUntil = 0;
  private readonly now: () => number;

  constructor(private readonly opts: LimiterOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Nothing is sent before `until` (epoch ms): a Retry-After. */
  pause(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until);
  }

  get paused(): number {
    return Math.max(0, this.pausedUntil - this.now());
  }

  /**
   * Waits for `n` slots (1 for a request, the member count for a `$batch`, at most the
   * concurrency), then for the window and any pause; resolves with a release function.
   */
  async acquire(n: number, signal: AbortSignal): Promise<() => void> {
    const k = Math.min(n, this.opts.concurrency);
    if (this.queue.length > 0 || this.inFlight + k > this.opts.concurrency) {
      await new Promise<void>((resolve, reject) => {
        const entry = { n: k, resolve };
        this.queue.push(entry);
        signal.addEventListener(
          'abort',
          () => {
            const i = this.queue.indexOf(entry);
            if (i >= 0) this.queue.splice(i, 1);
            reject(signal.reason as Error);
          },
          { once: true },
        );
      });
    } else this.inFlight += k;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.inFlight -= k;
      this.drain();
    };
    try {
      await this.admit(n, signal);
    } catch (err) {
      release();
      throw err;
    }
    return release;
  }

  /** Holding slots: waits out a pause and the window, then counts `n` requests as sent. */
  private async admit(n: number, signal: AbortSignal): Promise<void> {
    for (;;) {
      signal.throwIfAborted();
      const now = this.now();
      if (now < this.pausedUntil) {
        await sleep(this.pausedUntil - now, signal);
        continue;
      }
      while (this.sent.length > 0 && this.sent[0]! <= now - this.opts.windowMs) this.sent.shift();
      if (this.sent.length + n > this.opts.perWindow) {
        const oldest = this.sent[Math.min(this.sent.length - 1, this.sent.length + n - this.opts.perWindow - 1)]!;
        await sleep(Math.max(1, oldest + this.opts.windowMs - now), signal);
        continue;
      }
      for (let i = 0; i < n; i++) this.sent.push(now);
      return;
    }
  }

  private drain(): void {
    while (this.queue.length > 0 && this.inFlight + this.queue[0]!.n <= this.opts.concurrency) {
      const next = this.queue.shift()!;
      this.inFlight += next.n;
      next.resolve();
    }
  }
}
