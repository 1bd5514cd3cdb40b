/** Least-squares slopes of soak samples over time, with their standard errors. */

export interface Sample {
  /** Seconds since the start. */
  t: number;
  rss: number;
  heap: number;
  /**
   * Heap after the last full (mark-compact) collection since the previous sample, from the
   * service's `--trace-gc`: what is live. NaN when none happened (the slope skips those).
   */
  live: number;
  fds: number;
  handles: number;
  eld: number;
  store: number;
}

/** The series a soak reports: key, label, unit. */
export const SERIES: ReadonlyArray<readonly [Exclude<keyof Sample, 't'>, string, string]> = [
  ['rss', 'RSS', 'MiB'],
  ['heap', 'heap used', 'MiB'],
  ['live', 'heap after full GC', 'MiB'],
  ['fds', 'open fds', 'fds'],
  ['handles', 'active handles', 'handles'],
  ['eld', 'event-loop delay p99', 'ms'],
  ['store', 'store size', 'MiB'],
];

/** Slope per hour of `key` against time, its standard error, and the first and last values. */
export function slope(
  samples: readonly Sample[],
  key: Exclude<keyof Sample, 't'>,
): { perHour: number; se: number; first: number; last: number } {
  const pts = samples.filter((s) => Number.isFinite(s[key]));
  const n = pts.length;
  if (n < 3) return { perHour: NaN, se: NaN, first: pts[0]?.[key] ?? NaN, last: pts.at(-1)?.[key] ?? NaN };
  const xs = pts.map((s) => s.t / 3600);
  const ys = pts.map((s) => s[key]);
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (xs[i]! - mx) ** 2;
    sxy += (xs[i]! - mx) * (ys[i]! - my);
  }
  const b = sxy / sxx;
  const a = my - b * mx;
  let sse = 0;
  for (let i = 0; i < n; i++) sse += (ys[i]! - (a + b * xs[i]!)) ** 2;
  return { perHour: b, se: Math.sqrt(sse / (n - 2) / sxx), first: ys[0]!, last: ys[n - 1]! };
}
