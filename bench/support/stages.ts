/**
 * Where mailgate's CPU goes, by pipeline stage, from the V8 CPU profiles `node --cpu-prof`
 * writes for every thread of a process (the main thread's file has thread id 0, each parse
 * worker its own). Every sample is charged to the stage of the deepest frame on its stack
 * that belongs to a known part of the code (a mailgate folder or a package); frames of Node
 * itself only name a stage when nothing above them did (socket reads, timers). Samples can be
 * restricted to a window of the monotonic clock (`process.hrtime`, in µs), which is the clock
 * V8 stamps profiles with.
 *
 * Frames of the bundled executable (dist/cli/) are charged by the module their function comes
 * from, read from the chunk's source map: a chunk holds many modules (the IMAP chunk holds
 * imapflow and adapters/imap), so its own file name says nothing about the stage.
 *
 * A profile's samples measure time on the thread's stack, not CPU: on a loaded machine a thread
 * waiting for a core is charged as if it ran. The table therefore uses the profiles for each
 * stage's share only, and the process's CPU from the kernel for the amount.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const STAGES = [
  'fetch / protocol',
  'parse (MIME)',
  'document + preview',
  'intake + pool hand-over',
  'store',
  'delivery encoding + HTTP',
  'GC (on the thread)',
  'Node I/O and runtime',
  'other',
] as const;
export type Stage = (typeof STAGES)[number];

/** Busy µs per stage, apart for the main thread and the worker threads. */
export interface StageTimes {
  main: Record<Stage, number>;
  workers: Record<Stage, number>;
}

/** Path fragments → stage; the first match wins, so more specific fragments come first. */
const RULES: Array<[RegExp, Stage]> = [
  [/\/node_modules\/(imapflow|libmime|libbase64|libqp)\/|\/adapters\/imap\/|\/adapters\/files\/|\/src\/mime\/mbox/, 'fetch / protocol'],
  [/\/src\/mime\//, 'parse (MIME)'],
  [/\/src\/(document|preview)\/|\/src\/pipeline\/encoded\.js|\/src\/ledger\//, 'document + preview'],
  [/\/src\/pipeline\/(intake|pool|worker|origin)\.js/, 'intake + pool hand-over'],
  [/\/src\/store\/|\/node_modules\/(better-sqlite3|pg|pg-protocol|pg-pool)\//, 'store'],
  [/\/src\/(batcher|api)\/|\/src\/pipeline\/(delivery\/[a-z-]+|after-delivery)\.js|undici|node:_http_/, 'delivery encoding + HTTP'],
];

function zero(): Record<Stage, number> {
  return Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
}

interface CallFrame {
  functionName: string;
  url: string;
  /** Where the function starts in its file, 0-based. */
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const maps = new Map<string, SourceMap | null>();

/** The source map beside a file of the bundle (`<file>.map`), null for any other file or a chunk without one. */
function sourceMapOf(url: string): SourceMap | null {
  let map = maps.get(url);
  if (map === undefined) {
    map = null;
    if (url.startsWith('file:')) {
      const file = fileURLToPath(url);
      if (existsSync(`${file}.map`)) map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    }
    maps.set(url, map);
  }
  return map;
}

/** The module a frame's function comes from: its file, or for a chunk of the bundle the original module (a path). */
function moduleOf(frame: CallFrame): string {
  const map = sourceMapOf(frame.url);
  if (map === null) return frame.url;
  const entry = map.findEntry(frame.lineNumber, frame.columnNumber);
  if (!('originalSource' in entry)) return frame.url;
  const base = dirname(fileURLToPath(frame.url));
  return entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : resolve(base, entry.originalSource);
}

/** The stage of each node id (undefined: idle, not counted). */
function stageOfNodes(profile: Profile): Map<number, Stage | undefined> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out = new Map<number, Stage | undefined>();
  const visit = (id: number, inherited: Stage | undefined): void => {
    const node = byId.get(id)!;
    const { functionName } = node.callFrame;
    const url = moduleOf(node.callFrame);
    let stage = inherited;
    if (functionName === '(idle)') stage = undefined;
    else if (functionName === '(garbage collector)') stage = 'GC (on the thread)';
    else if (functionName === '(program)') stage = 'Node I/O and runtime';
    else {
      const rule = RULES.find(([re]) => re.test(url));
      if (rule !== undefined) stage = rule[1];
      else if (stage === undefined && url.startsWith('node:')) stage = 'Node I/O and runtime';
    }
    out.set(id, functionName === '(idle)' ? undefined : (stage ?? 'other'));
    for (const child of node.children ?? []) visit(child, stage);
  };
  visit(profile.nodes[0]!.id, undefined);
  return out;
}

/** Busy µs per stage of one profile, counting samples taken within [from, to] (µs, monotonic). */
function profileStages(profile: Profile, from: number, to: number): Record<Stage, number> {
  const stages = stageOfNodes(profile);
  const out = zero();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    if (t < from || t > to) continue;
    // A sample stands for the interval up to the next one.
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const stage = stages.get(profile.samples[i]!);
    if (stage !== undefined) out[stage] += dt;
  }
  return out;
}

/**
 * Sums the profiles in `dir` (all of one process) into stages, samples within [from, to]
 * (µs of the monotonic clock; defaults: everything).
 */
export function stagesOf(dir: string, from = -Infinity, to = Infinity): StageTimes {
  const times: StageTimes = { main: zero(), workers: zero() };
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile
    const thread = Number(file.split('.')[4]);
    const own = profileStages(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile, from, to);
    const into = thread === 0 ? times.main : times.workers;
    for (const s of STAGES) into[s] += own[s];
  }
  return times;
}

/** One thread's busy µs per stage in each bucket of a timeline (undefined stage: idle, not counted). */
export interface ThreadTimeline {
  /** 0 for the main thread, else the worker's thread id. */
  thread: number;
  buckets: Array<Record<Stage, number>>;
}

/**
 * Where each thread of the process was busy over time: the samples within [from, to] (µs, monotonic)
 * in buckets of `bucketUs`, by stage. A bucket's shortfall from its length is the thread's idle
 * time there (on a loaded machine a sample also counts time spent waiting for a core, so the gaps
 * are trustworthy only on a quiet one).
 */
export function timelineOf(dir: string, from: number, to: number, bucketUs: number): ThreadTimeline[] {
  const out: ThreadTimeline[] = [];
  const count = Math.max(1, Math.ceil((to - from) / bucketUs));
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    const stages = stageOfNodes(profile);
    const buckets = Array.from({ length: count }, zero);
    let t = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      t += profile.timeDeltas[i]!;
      const stage = stages.get(profile.samples[i]!);
      if (stage === undefined) continue;
      // A sample stands for the interval up to the next one, spread over the buckets it spans.
      const start = Math.max(t, from);
      const end = Math.min(t + (profile.timeDeltas[i + 1] ?? 0), to);
      for (let at = start; at < end; ) {
        const b = Math.floor((at - from) / bucketUs);
        const next = Math.min(end, from + (b + 1) * bucketUs);
        buckets[b]![stage] += next - at;
        at = next;
      }
    }
    out.push({ thread: Number(file.split('.')[4]), buckets });
  }
  return out.sort((a, b) => a.thread - b.thread);
}

/** Short column names of the stages, for the timeline. */
const SHORT: Record<Stage, string> = {
  'fetch / protocol': 'fetch',
  'parse (MIME)': 'mime',
  'document + preview': 'doc',
  'intake + pool hand-over': 'intake',
  store: 'store',
  'delivery encoding + HTTP': 'deliv',
  'GC (on the thread)': 'gc',
  'Node I/O and runtime': 'node',
  other: 'other',
};

/**
 * Prints the timeline: one line per bucket, each thread's busy ms in it by stage (those it spent
 * anything in) and its idle ms (the bucket's length less its samples), `marks` (ms from the
 * window's start) named where they fall. Thread 0 is the main thread; the others are the parse
 * workers and the store's checkpoint thread, by thread id.
 */
export function printTimeline(indent: string, threads: ThreadTimeline[], bucketUs: number, marks: Record<string, number>): void {
  const ms = (us: number, width: number) => (us / 1000).toFixed(0).padStart(width);
  // Per thread, the stages it spent anything in (a parse worker never stores, the main thread never parses).
  const used = threads.map((t) => STAGES.filter((s) => t.buckets.some((b) => b[s] >= 500)));
  const head = threads
    .map((t, i) => `${t.thread === 0 ? 'main' : `thread ${t.thread}`}: idle ${used[i]!.map((s) => SHORT[s].padStart(4)).join(' ')}`)
    .join(' | ');
  console.log(`${indent}${'ms'.padStart(5)}  ${head}`);
  const count = threads[0]?.buckets.length ?? 0;
  for (let b = 0; b < count; b++) {
    const cols = threads.map((t, i) => {
      const bucket = t.buckets[b]!;
      const busy = STAGES.reduce((n, s) => n + bucket[s], 0);
      const label = t.thread === 0 ? 'main' : `thread ${t.thread}`;
      return `${ms(Math.max(0, bucketUs - busy), label.length + 6)} ${used[i]!.map((s) => ms(bucket[s], Math.max(4, SHORT[s].length))).join(' ')}`;
    });
    const at = (b * bucketUs) / 1000;
    const here = Object.entries(marks)
      .filter(([, m]) => m >= at && m < at + bucketUs / 1000)
      .map(([name]) => name);
    console.log(`${indent}${String(at).padStart(5)}  ${cols.join(' | ')}${here.length > 0 ? `  <- ${here.join(', ')}` : ''}`);
  }
}

/** The monotonic clock in µs, as V8 stamps CPU profiles. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * The per-stage table: µs per message on the main thread, on the workers and together. The
 * profiles give each stage's share; the shares are applied to the process's CPU from the kernel
 * (samples count waiting for a core as busy, and GC and compiler threads are not sampled at
 * all), so the column sums to the measured CPU. Then the parse-only figure and the ratio.
 */
export function printStages(
  indent: string,
  times: StageTimes,
  messages: number,
  cpuSeconds: number,
  parseOnlyUs: number,
  parseOnlyLabel: string,
): void {
  const sampled = STAGES.reduce((n, s) => n + times.main[s] + times.workers[s], 0);
  const total = (cpuSeconds * 1e6) / messages;
  const scale = sampled === 0 ? 0 : (cpuSeconds * 1e6) / sampled;
  const us = (v: number) => ((v * scale) / messages).toFixed(0).padStart(7);
  console.log(`${indent}${'stage (µs per message)'.padEnd(28)} ${'main'.padStart(7)} ${'workers'.padStart(7)} ${'total'.padStart(7)}`);
  let main = 0;
  let workers = 0;
  for (const s of STAGES) {
    const m = times.main[s];
    const w = times.workers[s];
    main += m;
    workers += w;
    if (m + w > 0) console.log(`${indent}${s.padEnd(28)} ${us(m)} ${us(w)} ${us(m + w)}`);
  }
  console.log(
    `${indent}${'process CPU (kernel)'.padEnd(28)} ${us(main)} ${us(workers)} ${us(main + workers)}` +
      `  (profiles: ${(sampled / messages).toFixed(0)} µs of samples per message, shares applied to the CPU)`,
  );
  console.log(
    `${indent}${parseOnlyLabel}: ${parseOnlyUs.toFixed(0)} µs per message; end to end ${(total / parseOnlyUs).toFixed(2)}× that` +
      ` (target <= 2.5×, i.e. <= ${(2.5 * parseOnlyUs).toFixed(0)} µs)`,
  );
}
