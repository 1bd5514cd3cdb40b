/** A clock for the connection pacer's tests. */
import type { PacerClock } from '../../src/pipeline/pacer.js';

/** A clock the test moves by hand: timers fire only in advance(). */
export function manualClock(): PacerClock & { advance(ms: number): void; pending(): number } {
  let now = 0;
  let timers: Array<{ at: number; fn: () => void }> = [];
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const t = { at: now + ms, fn };
      timers.push(t);
      return t;
    },
    clearTimeout(t) {
      timers = timers.filter((x) => x !== t);
    },
    advance(ms) {
      const end = now + ms;
      for (;;) {
        const next = timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (next === undefined) break;
        timers = timers.filter((t) => t !== next);
        now = next.at;
        next.fn();
      }
      now = end;
    },
    pending: () => timers.length,
  };
}
