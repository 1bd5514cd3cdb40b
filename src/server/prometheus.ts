/**
 * A small, dependency-free Prometheus registry (text exposition format 0.0.4): counters,
 * gauges and histograms with fixed label names. A gauge may be filled on scrape by a
 * collector (outbox depth comes from the store that way). The named mailgate metrics are
 * in src/metrics.ts.
 */
import { GatewayError } from '../errors.js';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels<L extends string> = Readonly<Record<L, string>>;

const METRIC_NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function invalid(message: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_SERVER_METRIC_INVALID', message);
}

/** HELP text: backslash and newline escaped. */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** Label values: backslash, double quote and newline escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function labelText(names: readonly string[], values: readonly string[], extra?: [string, string]): string {
  const pairs = names.map((n, i) => `${n}="${escapeLabelValue(values[i]!)}"`);
  if (extra) pairs.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

interface MetricOptions<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

abstract class Metric<L extends string, S> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  protected readonly series = new Map<string, { values: string[]; state: S }>();

  constructor(options: MetricOptions<L>, reserved: readonly string[] = []) {
    if (!METRIC_NAME_RE.test(options.name)) throw invalid(`invalid metric name "${options.name}"`);
    const labelNames = options.labelNames ?? [];
    for (const l of labelNames) {
      if (!LABEL_NAME_RE.test(l) || l.startsWith('__') || reserved.includes(l)) throw invalid(`invalid label name "${l}" on ${options.name}`);
    }
    if (new Set(labelNames).size !== labelNames.length) throw invalid(`duplicate label name on ${options.name}`);
    this.name = options.name;
    this.help = options.help;
    this.labelNames = labelNames;
  }

  protected abstract initial(): S;

  protected entry(labels: Labels<L>): { values: string[]; state: S } {
    const given = Object.keys(labels);
    if (given.length !== this.labelNames.length || this.labelNames.some((n) => typeof labels[n] !== 'string')) {
      throw invalid(`${this.name} takes labels {${this.labelNames.join(',')}}, got {${given.join(',')}}`);
    }
    const values = this.labelNames.map((n) => labels[n]);
    const key = JSON.stringify(values);
    let e = this.series.get(key);
    if (!e) {
      e = { values, state: this.initial() };
      this.series.set(key, e);
    }
    return e;
  }

  /** Forgets every series (a collector calls this before setting the current ones). */
  reset(): void {
    this.series.clear();
  }

  protected abstract lines(): string[];

  render(): string {
    return [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`, ...this.lines()].join('\n') + '\n';
  }
}

function checkValue(name: string, v: number, nonNegative: boolean): void {
  if (typeof v !== 'number' || Number.isNaN(v) || (nonNegative && v < 0)) throw invalid(`invalid value ${String(v)} for ${name}`);
}

export class Counter<L extends string = never> extends Metric<L, { v: number }> {
  readonly type = 'counter' as const;
  protected initial() { return { v: 0 }; }
  inc(labels: Labels<L>, by = 1): void {
    checkValue(this.name, by, true);
    this.entry(labels).state.v += by;
  }
  get(labels: Labels<L>): number {
    return this.entry(labels).state.v;
  }
  protected lines(): string[] {
    if (this.labelNames.length === 0 && this.series.size === 0) return [`${this.name} 0`];
    return [...this.series.values()].map((e) => `${this.name}${labelText(this.labelNames, e.values)} ${formatValue(e.state.v)}`);
  }
}

export type Collector = () => void | Promise<void>;

export class Gauge<L extends string = never> extends Metric<L, { v: number }> {
  readonly type = 'gauge' as const;
  collector: Collector | undefined;
  protected initial() { return { v: 0 }; }
  set(labels: Labels<L>, value: number): void {
    checkValue(this.name, value, false);
    this.entry(labels).state.v = value;
  }
  inc(labels: Labels<L>, by = 1): void {
    checkValue(this.name, by, false);
    this.entry(labels).state.v += by;
  }
  dec(labels: Labels<L>, by = 1): void {
    this.inc(labels, -by);
  }
  get(labels: Labels<L>): number {
    return this.entry(labels).state.v;
  }
  /** Runs `fn` before each scrape; it sets the current values (e.g. from the store). */
  collect(fn: Collector): void {
    this.collector = fn;
  }
  protected lines(): string[] {
    return [...this.series.values()].map((e) => `${this.name}${labelText(this.labelNames, e.values)} ${formatValue(e.state.v)}`);
  }
}

/** Seconds: fit for HTTP requests that take milliseconds to minutes (the API deadline is 240 s). */
export const DEFAULT_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 240] as const;

interface HistogramState { counts: number[]; sum: number; count: number }

export class Histogram<L extends string = never> extends Metric<L, HistogramState> {
  readonly type = 'histogram' as const;
  readonly buckets: readonly number[];

  constructor(options: MetricOptions<L> & { buckets?: readonly number[] }) {
    super(options, ['le']);
    const b = options.buckets ?? DEFAULT_SECONDS_BUCKETS;
    if (b.length === 0 || b.some((x, i) => !Number.isFinite(x) || (i > 0 && x <= b[i - 1]!))) throw invalid(`${options.name}: buckets must be finite and strictly increasing`);
    this.buckets = [...b];
  }
  protected initial(): HistogramState { return { counts: this.buckets.map(() => 0), sum: 0, count: 0 }; }
  observe(labels: Labels<L>, value: number): void {
    checkValue(this.name, value, false);
    const s = this.entry(labels).state;
    this.buckets.forEach((le, i) => { if (value <= le) s.counts[i]! += 1; });
    s.sum += value;
    s.count += 1;
  }
  /** Starts a timer; calling the result observes the elapsed seconds. */
  startTimer(labels: Labels<L>): () => number {
    const start = process.hrtime.bigint();
    return () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.observe(labels, seconds);
      return seconds;
    };
  }
  protected lines(): string[] {
    const out: string[] = [];
    for (const e of this.series.values()) {
      const s = e.state;
      this.buckets.forEach((le, i) => out.push(`${this.name}_bucket${labelText(this.labelNames, e.values, ['le', formatValue(le)])} ${s.counts[i]}`));
      out.push(`${this.name}_bucket${labelText(this.labelNames, e.values, ['le', '+Inf'])} ${s.count}`);
      out.push(`${this.name}_sum${labelText(this.labelNames, e.values)} ${formatValue(s.sum)}`);
      out.push(`${this.name}_count${labelText(this.labelNames, e.values)} ${s.count}`);
    }
    return out;
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyMetric = Counter<any> | Gauge<any> | Histogram<any>;

export interface RegistryOptions {
  /** Called when a collector throws or exceeds `collectTimeoutMs`; the gauge keeps its last values. */
  onCollectError?: (metric: string, err: unknown) => void;
  /** Bound on one collector run, in ms. Default 5000. */
  collectTimeoutMs?: number;
}

export class Registry {
  private readonly metrics = new Map<string, AnyMetric>();
  private readonly collectTimeoutMs: number;

  constructor(private readonly options: RegistryOptions = {}) {
    const t = options.collectTimeoutMs ?? 5_000;
    if (!Number.isInteger(t) || t < 1) throw invalid(`collectTimeoutMs must be a positive integer, got ${String(t)}`);
    this.collectTimeoutMs = t;
  }

  private add<M extends AnyMetric>(m: M): M {
    if (this.metrics.has(m.name)) throw invalid(`metric ${m.name} is registered twice`);
    this.metrics.set(m.name, m);
    return m;
  }
  counter<L extends string = never>(o: MetricOptions<L>): Counter<L> { return this.add(new Counter<L>(o)); }
  gauge<L extends string = never>(o: MetricOptions<L>): Gauge<L> { return this.add(new Gauge<L>(o)); }
  histogram<L extends string = never>(o: MetricOptions<L> & { buckets?: readonly number[] }): Histogram<L> { return this.add(new Histogram<L>(o)); }

  private async runCollector(g: Gauge<string>): Promise<void> {
    const fn = g.collector;
    if (!fn) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`collector of ${g.name} took longer than ${this.collectTimeoutMs} ms`)), this.collectTimeoutMs);
    });
    try {
      await Promise.race([Promise.resolve().then(fn), timeout]);
    } catch (err) {
      this.options.onCollectError?.(g.name, err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs the collectors, then renders every metric in registration order. */
  async render(): Promise<string> {
    const gauges = [...this.metrics.values()].filter((m): m is Gauge<string> => m instanceof Gauge);
    await Promise.all(gauges.map((g) => this.runCollector(g)));
    return [...this.metrics.values()].map((m) => m.render()).join('');
  }
}
