/**
 * Where a `mailgate serve` IMAP sync's wall time goes, from outside the process: the kernel's CPU
 * counters of mailgate (all threads, and its main thread), of Dovecot (the master and its
 * children) and of this process (the emulator) sampled every few ms, with the bytes Dovecot's
 * imap processes wrote (`/proc/<pid>/io`: the FETCH answers) and the comments the emulator holds.
 * From these, the sync's phases — start-up (service listening → the first FETCH answer),
 * filling (→ the first comment at the API), syncing (→ the last FETCH answer), tail (→ the last
 * comment) — each with its wall time and its share of the CPU bound (the CPU of the three
 * processes over cores × wall), and how long the machine's cores sat idle in it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { clockTicks } from './cpu.js';

/** One sample: ms since the service listened; CPU seconds; Dovecot's imap bytes written; comments held; machine idle seconds. */
export interface ServeSample {
  ms: number;
  mailgate: number;
  main: number;
  dovecot: number;
  emulator: number;
  written: number;
  comments: number;
  idle: number;
}

function statFields(path: string): string[] | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

const ticksOf = (path: string): number => {
  const f = statFields(path);
  return f === undefined ? 0 : Number(f[11]) + Number(f[12]);
};

function childrenOf(ppid: number): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const f = statFields(`/proc/${e}/stat`);
    if (f !== undefined && Number(f[1]) === ppid) out.push(Number(e));
  }
  return out;
}

function writtenBy(pid: number): number {
  try {
    const m = /wchar: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function idleSeconds(tck: number): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.split(/\s+/).slice(1).map(Number);
  return (f[3]! + f[4]!) / tck;
}

/**
 * Samples every `everyMs` until stopped. Dovecot's children are listed again every 100 ms (a
 * connection's imap process appears at login); counters of a child that ended are kept. The
 * sampler's own CPU (it runs in this process, beside the emulator) is returned, to be taken off
 * the emulator's.
 */
export function sampleServe(
  pid: number,
  dovecotPid: number,
  comments: () => number,
  everyMs = 5,
): { origin: number; stop: () => { samples: ServeSample[]; ownCpu: number } } {
  const tck = clockTicks();
  const t0 = performance.now();
  const out: ServeSample[] = [];
  let children: number[] = [];
  let listedAt = -Infinity;
  const lastOf = new Map<number, { cpu: number; written: number }>();
  let ownCpu = 0;
  const take = () => {
    const c0 = process.cpuUsage();
    const now = performance.now();
    if (now - listedAt > 100) {
      children = childrenOf(dovecotPid);
      listedAt = now;
    }
    let dovecot = ticksOf(`/proc/${dovecotPid}/stat`);
    for (const c of children) {
      const cpu = ticksOf(`/proc/${c}/stat`);
      const written = writtenBy(c);
      if (cpu > 0 || written > 0) lastOf.set(c, { cpu, written });
    }
    let written = 0;
    for (const v of lastOf.values()) {
      dovecot += v.cpu;
      written += v.written;
    }
    const u = process.cpuUsage();
    out.push({
      ms: now - t0,
      mailgate: ticksOf(`/proc/${pid}/stat`) / tck,
      main: ticksOf(`/proc/${pid}/task/${pid}/stat`) / tck,
      dovecot: dovecot / tck,
      emulator: (u.user + u.system) / 1e6 - ownCpu,
      written,
      comments: comments(),
      idle: idleSeconds(tck),
    });
    const c1 = process.cpuUsage(c0);
    ownCpu += (c1.user + c1.system) / 1e6;
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    origin: performance.timeOrigin + t0,
    stop: () => {
      clearInterval(timer);
      take();
      return { samples: out, ownCpu };
    },
  };
}

/** One sample of thread states (thread-states.ts): threads running or runnable (R) and in uninterruptible wait (D), by process. */
export interface StateSample {
  ms: number;
  r: Record<string, number>;
  d: Record<string, number>;
}

/** Shares of a phase's state samples: what was runnable at each instant. */
export interface PhaseStates {
  samples: number;
  /** Nothing of the run's processes runnable or in D: every one of them waited (a round trip, a timer). */
  none: number;
  /** mailgate's main thread runnable, nothing else of the run's processes. */
  mainAlone: number;
  /** Exactly one thread runnable (any), one core at most busy with the run. */
  one: number;
  /** Two or more threads runnable: both cores could be busy. */
  twoPlus: number;
  /** mailgate's main thread runnable. */
  main: number;
  /** Something in D (a disk wait) while nothing was runnable. */
  disk: number;
}

export interface ServePhase {
  name: string;
  from: number;
  to: number;
  /** CPU seconds of mailgate, its main thread, Dovecot and the emulator in the phase. */
  cpu: { mailgate: number; main: number; dovecot: number; emulator: number };
  /** Share of the CPU bound: the three processes' CPU over cores × wall. */
  share: number;
  /** Core-seconds the machine's cores sat idle (anyone's work counts as busy). */
  idle: number;
  states?: PhaseStates;
}

function statesIn(states: StateSample[], from: number, to: number): PhaseStates {
  const inside = states.filter((s) => s.ms >= from && s.ms < to);
  const n = Math.max(1, inside.length);
  const sum = (r: Record<string, number>) => Object.entries(r).reduce((a, [k, v]) => a + (k.endsWith('/main') ? 0 : v), 0);
  const share = (f: (s: StateSample) => boolean) => inside.filter(f).length / n;
  return {
    samples: inside.length,
    none: share((s) => sum(s.r) === 0 && sum(s.d) === 0),
    disk: share((s) => sum(s.r) === 0 && sum(s.d) > 0),
    mainAlone: share((s) => sum(s.r) === 1 && (s.r['mailgate/main'] ?? 0) === 1),
    one: share((s) => sum(s.r) === 1),
    twoPlus: share((s) => sum(s.r) >= 2),
    main: share((s) => (s.r['mailgate/main'] ?? 0) === 1),
  };
}

function at(samples: ServeSample[], ms: number, key: keyof ServeSample): number {
  if (ms <= samples[0]!.ms) return samples[0]![key];
  for (let i = 1; i < samples.length; i++) {
    const b = samples[i]!;
    if (b.ms >= ms) {
      const a = samples[i - 1]!;
      return a[key] + ((b[key] - a[key]) * (ms - a.ms)) / Math.max(1e-9, b.ms - a.ms);
    }
  }
  return samples.at(-1)![key];
}

/**
 * The phases of one sync of `count` messages. A FETCH answer is a sample in which Dovecot's imap
 * processes wrote at least `minBytes` (IDLE and NOOP answers are a few bytes).
 */
export function servePhases(
  samples: ServeSample[],
  count: number,
  cores: number,
  states?: { samples: StateSample[]; origin: number },
  minBytes = 2048,
): ServePhase[] {
  let firstFetch = NaN;
  let lastFetch = NaN;
  for (let i = 1; i < samples.length; i++) {
    if (samples[i]!.written - samples[i - 1]!.written >= minBytes) {
      if (Number.isNaN(firstFetch)) firstFetch = samples[i - 1]!.ms;
      lastFetch = samples[i]!.ms;
    }
  }
  const firstComment = samples.find((s) => s.comments > 0)?.ms ?? NaN;
  const last = samples.find((s) => s.comments >= count)?.ms ?? samples.at(-1)!.ms;
  const row = (name: string, from: number, to: number): ServePhase => {
    const d = (k: keyof ServeSample) => at(samples, to, k) - at(samples, from, k);
    const cpu = { mailgate: d('mailgate'), main: d('main'), dovecot: d('dovecot'), emulator: d('emulator') };
    const wall = (to - from) / 1000;
    const phase: ServePhase = { name, from, to, cpu, share: (cpu.mailgate + cpu.dovecot + cpu.emulator) / cores / wall, idle: d('idle') };
    if (states !== undefined) phase.states = statesIn(states.samples, states.origin + from, states.origin + to);
    return phase;
  };
  const syncFrom = Math.max(firstFetch, firstComment);
  return [
    row('start-up (listening → first FETCH answer)', 0, firstFetch),
    row('filling (→ first comment)', firstFetch, firstComment),
    row('syncing (→ last FETCH answer)', syncFrom, Math.max(syncFrom, lastFetch)),
    row('tail (→ last comment)', Math.max(syncFrom, lastFetch), last),
    row('whole sync', 0, last),
  ];
}
