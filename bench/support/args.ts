/** The benchmarks' positional arguments: `node dist/bench/x.js [n1] [n2] …`. */

/** The positive integer at `process.argv[i]`, or `fallback` when it is absent. */
export function argInt(i: number, fallback: number): number {
  const v = process.argv[i];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`argument ${i - 1} must be a positive integer, got ${v}`);
  return n;
}
