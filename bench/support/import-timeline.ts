/**
 * Where a whole `mailgate import` process's wall time goes, from outside it: the kernel's CPU
 * counters of mailgate (the process, and its main thread) and of the emulator sampled every few ms, the input's read
 * file held open (`/proc/<pid>/fd`), and the emulator's request log (`emulator --log`) for the
 * delivery requests. From these, the run's phases — start-up (process start → first byte of the
 * input read), reading (→ last byte read), tail (→ last delivery answered), exit (→ process
 * gone) — each with its wall time and its share of the CPU bound (the CPU of mailgate and the
 * emulator over cores × wall), and the steady window (first byte read → last byte read) beside
 * the whole run. Beside each phase, where each thread's time went (the kernel's per-thread
 * schedstat: running, runnable but waiting for a core, asleep) and how long the cores sat idle
 * (/proc/stat): who waits for whom, where profiles cannot tell (they charge a thread's wait for a
 * core to whatever it ran next).
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { clockTicks } from './cpu.js';

function ticksOf(path: string): number {
  try {
    const text = readFileSync(path, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return -1;
  }
}

/** Threads by kind: mailgate's main thread, its worker threads (parse worker, checkpoint thread), V8's helper threads, the rest (libuv), the emulator (all its threads). */
export const THREAD_KINDS = ['main', 'workers', 'v8', 'other', 'emulator'] as const;
export type ThreadKind = (typeof THREAD_KINDS)[number];

/** Seconds a kind of thread ran and waited, runnable, for a core (summed over its threads, ended ones included). */
export type Sched = Record<ThreadKind, { run: number; wait: number }>;

/** One sample: ms since the process started, CPU seconds of mailgate (all threads, and its main thread) and of the emulator. */
export interface Sample {
  ms: number;
  mailgate: number;
  main: number;
  emulator: number;
  /** 1 while the input file is open (the reader streams it with positioned reads: no offset to see), else -1. */
  pos: number;
  sched: Sched;
  /** Seconds the machine's cores have been idle (all cores, since boot). */
  idle: number;
}

function kindOf(pid: number, tid: number, comm: string): ThreadKind {
  if (tid === pid) return 'main';
  if (comm === 'WorkerThread') return 'workers';
  if (comm.startsWith('V8')) return 'v8';
  return 'other';
}

/** Each thread's last schedstat (run and wait in ns), kept after it ends. */
type Threads = Map<string, { kind: ThreadKind; run: number; wait: number }>;

function readThreads(pid: number, threads: Threads, as?: ThreadKind): void {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return; // gone
  }
  for (const tid of tids) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      const key = `${pid}/${tid}`;
      const kind = threads.get(key)?.kind ?? as ?? kindOf(pid, Number(tid), readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
      threads.set(key, { kind, run: run!, wait: wait! });
    } catch {
      // ended meanwhile
    }
  }
}

function schedOf(threads: Threads): Sched {
  const out = Object.fromEntries(THREAD_KINDS.map((k) => [k, { run: 0, wait: 0 }])) as Sched;
  for (const t of threads.values()) {
    out[t.kind].run += t.run / 1e9;
    out[t.kind].wait += t.wait / 1e9;
  }
  return out;
}

function idleSeconds(tck: number): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.split(/\s+/).slice(1).map(Number);
  return (f[3]! + f[4]!) / tck;
}

/** Samples `pid` (mailgate) and `emuPid` every `everyMs` until stopped. */
export function sampleProcess(
  pid: number,
  emuPid: number,
  input: string,
  t0: bigint,
  everyMs = 10,
): { stop: () => Sample[]; last: () => Sample | undefined } {
  const tck = clockTicks();
  const out: Sample[] = [];
  const threads: Threads = new Map();
  let fd: string | undefined;
  const take = () => {
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    // The process's counters include its threads that have ended (a thread's own go with it).
    const total = ticksOf(`/proc/${pid}/stat`);
    const main = ticksOf(`/proc/${pid}/task/${pid}/stat`);
    if (total < 0 || main < 0) return; // gone
    let pos = -1;
    try {
      if (fd === undefined) {
        for (const f of readdirSync(`/proc/${pid}/fd`)) {
          try {
            if (readlinkSync(`/proc/${pid}/fd/${f}`) === input) fd = f;
          } catch {
            // closed meanwhile
          }
        }
      }
      if (fd !== undefined) {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== input) throw new Error('reused');
        pos = 1;
      }
    } catch {
      fd = undefined;
      pos = -1;
    }
    const emu = ticksOf(`/proc/${emuPid}/stat`);
    readThreads(pid, threads);
    readThreads(emuPid, threads, 'emulator');
    const sched = schedOf(threads);
    out.push({ ms, mailgate: total / tck, main: main / tck, emulator: Math.max(0, emu) / tck, pos, sched, idle: idleSeconds(tck) });
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return out;
    },
    last: () => out.at(-1),
  };
}

/** The emulator's request lines (`emulator --log`, JSON): ms since the import started of each delivery request's arrival and answer. */
export function deliveryRequests(log: string, epochAtT0: number): Array<{ start: number; end: number }> {
  const open = new Map<string, number>();
  const out: Array<{ start: number; end: number }> = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    let e: { time?: number; reqId?: string; msg?: string; req?: { url?: string }; responseTime?: number };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      continue;
    }
    if (e.time === undefined || e.reqId === undefined) continue;
    if (e.msg === 'incoming request' && /raw-emails/.test(e.req?.url ?? '')) open.set(e.reqId, e.time - epochAtT0);
    else if (e.msg === 'request completed' && open.has(e.reqId)) {
      out.push({ start: open.get(e.reqId)!, end: e.time - epochAtT0 });
      open.delete(e.reqId);
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

export interface Phases {
  /** ms since process start. */
  firstRead: number;
  lastRead: number;
  firstPost: number;
  lastAnswer: number;
  exit: number;
  /** [name, from ms, to ms, wall ms, CPU s (mailgate + emulator), share of the bound, main thread busy share] */
  rows: Array<{ name: string; from: number; to: number; cpu: number; mainCpu: number; share: number; sched: Sched; idle: number }>;
}

/** A counter at time `ms`, interpolated between samples. */
function at(samples: Sample[], ms: number, key: 'mailgate' | 'main' | 'emulator' | ((s: Sample) => number)): number {
  const v = typeof key === 'function' ? key : (s: Sample) => s[key];
  if (ms <= samples[0]!.ms) return ms <= 0 ? 0 : v(samples[0]!);
  for (let i = 1; i < samples.length; i++) {
    const b = samples[i]!;
    if (b.ms >= ms) {
      const a = samples[i - 1]!;
      return v(a) + ((v(b) - v(a)) * (ms - a.ms)) / Math.max(1e-9, b.ms - a.ms);
    }
  }
  return v(samples.at(-1)!);
}

/**
 * The phases of one run. `size`: the input's bytes; `exitMs`, `finalCpu`: the process's end and its
 * whole CPU (from its reaping), so the exit phase counts what happened after the last sample.
 */
export function phasesOf(
  samples: Sample[],
  posts: Array<{ start: number; end: number }>,
  exitMs: number,
  finalCpu: number,
  finalEmu: number,
  cores: number,
): Phases {
  // The stream holds the file open from its first read to its last; a glance at its first bytes
  // (what kind of file it is) opens it only for a moment: the read is where it stays open.
  const open = samples.map((s, i) => s.pos > 0 && (samples[i + 1]?.pos ?? 0) > 0);
  const firstRead = samples[open.indexOf(true)]?.ms ?? NaN;
  const lastRead = samples.filter((s) => s.pos > 0).at(-1)?.ms ?? NaN;
  const firstPost = posts[0]?.start ?? NaN;
  const lastAnswer = Math.max(...posts.map((p) => p.end));
  const cpu = (ms: number) => (ms >= exitMs ? finalCpu + finalEmu : at(samples, ms, 'mailgate') + at(samples, ms, 'emulator'));
  const main = (ms: number) => at(samples, ms, 'main');
  const row = (name: string, from: number, to: number) => {
    const c = cpu(to) - cpu(from);
    // Past the last sample nothing more is known of the threads (the process is gone).
    const upTo = Math.min(to, samples.at(-1)!.ms);
    const delta = (f: (s: Sample) => number) => Math.max(0, at(samples, upTo, f) - at(samples, from, f));
    const sched = Object.fromEntries(
      THREAD_KINDS.map((k) => [k, { run: delta((s) => s.sched[k].run), wait: delta((s) => s.sched[k].wait) }]),
    ) as Sched;
    return {
      sched,
      idle: delta((s) => s.idle),
      name,
      from,
      to,
      cpu: c,
      mainCpu: main(Math.min(to, samples.at(-1)!.ms)) - main(from),
      share: c / cores / ((to - from) / 1000),
    };
  };
  return {
    firstRead,
    lastRead,
    firstPost,
    lastAnswer,
    exit: exitMs,
    rows: [
      row('start-up (start → first byte read)', 0, firstRead),
      row('reading (first → last byte read)', firstRead, lastRead),
      row('tail (last byte read → last delivery answered)', lastRead, lastAnswer),
      row('exit (last answer → process gone)', lastAnswer, exitMs),
      row('whole run', 0, exitMs),
    ],
  };
}
