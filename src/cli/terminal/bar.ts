/** The progress bar's text: bar, percentage, bytes, rates and ETA, from a window of recent samples. */

export interface BarState {
  /** Bytes of the input read so far. */
  done: number;
  /** Bytes of the whole input; undefined while it is being measured. */
  total: number | undefined;
  bytesPerSecond: number;
  messagesPerSecond: number;
}

const CELLS = 20;

export function bytesText(n: number): string {
  if (n < 1e3) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

/** `m:ss` or `h:mm:ss`; `--:--` when it cannot be told (no rate yet). */
export function durationText(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const two = (n: number) => String(n).padStart(2, '0');
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${two(m)}:${two(s % 60)}` : `${m}:${two(s % 60)}`;
}

/** Whole percent, never 100 before the end (and never over it: files may grow while read). */
export function percentOf(done: number, total: number): number {
  if (total <= 0) return 100;
  return done >= total ? 100 : Math.min(99, Math.floor((done * 100) / total));
}

export function barText(s: BarState): string {
  const rates = `${Math.round(s.messagesPerSecond)} msg/s  ${bytesText(Math.round(s.bytesPerSecond))}/s`;
  if (s.total === undefined) return `measuring input…  ${bytesText(s.done)}  ${rates}`;
  const pct = percentOf(s.done, s.total);
  const full = Math.floor((pct * CELLS) / 100);
  const bar = `[${'█'.repeat(full)}${'░'.repeat(CELLS - full)}]`;
  const eta = s.bytesPerSecond > 0 ? durationText(Math.max(0, s.total - s.done) / s.bytesPerSecond) : '--:--';
  return `${bar} ${String(pct).padStart(3)}%  ${bytesText(s.done)} / ${bytesText(s.total)}  ${rates}  ETA ${eta}`;
}

interface Sample {
  at: number;
  bytes: number;
  messages: number;
}

/**
 * Rates over the last `windowMs`: they follow the current speed, and the jump of a resumed
 * import (its first position lies far into the input) leaves the window after a while.
 */
export class RateWindow {
  private samples: Sample[] = [];

  constructor(private readonly windowMs = 5_000) {}

  add(at: number, bytes: number, messages: number): void {
    this.samples.push({ at, bytes, messages });
    while (this.samples.length > 2 && this.samples[0]!.at < at - this.windowMs) this.samples.shift();
  }

  rates(): { bytesPerSecond: number; messagesPerSecond: number } {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (first === undefined || last === undefined || last.at <= first.at) return { bytesPerSecond: 0, messagesPerSecond: 0 };
    const seconds = (last.at - first.at) / 1000;
    return { bytesPerSecond: (last.bytes - first.bytes) / seconds, messagesPerSecond: (last.messages - first.messages) / seconds };
  }
}
