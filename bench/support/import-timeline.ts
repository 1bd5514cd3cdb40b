/**
 * Where a whole `mailgate import` process's wall time goes, from outside it: the kernel's CPU
 * counters of mailgate (the process, and its main thread) and of the emulator sampled every few ms, the input's read
 * file held open (`/proc/<pid>/fd`), and the emulator's request log (`emulator --log`) for the
 * delivery requests. From these, the run's phases — start-up (process start → first byte of the
 * input read), reading (→ last byte read), tail (→ last delivery answered), exit (→ process
 * gone) — each with its wall time and its share of the CPU bound (the CPU of mailgate and the
 * emulator over cores × wall), and the steady window (first byte read → last byte read) beside
 * the whole run.
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

/** One sample: ms since the process started, CPU seconds of mailgate (all threads, and its main thread) and of the emulator. */
export interface Sample {
  ms: number;
  mailgate: number;
  main: number;
  emulator: number;
  /** 1 while the input file is open (the reader streams it with positioned reads: no offset to see), else -1. */
  pos: number;
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
    out.push({ ms, mailgate: total / tck, main: main / tck, emulator: Math.max(0, emu) / tck, pos });
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
  rows: Array<{ name: string; from: number; to: number; cpu: number; mainCpu: number; share: number }>;
}

/** CPU at time `ms`, interpolated between samples. */
function at(samples: Sample[], ms: number, key: 'mailgate' | 'main' | 'emulator'): number {
  if (ms <= samples[0]!.ms) return ms <= 0 ? 0 : samples[0]![key];
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
    return {
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
