/**
 * Run as its own process (`node thread-states.js <everyMs> <label=pid>…`): samples the state of
 * every thread of each named process (`/proc/<pid>/task/<tid>/stat`: R running or runnable, D
 * in the kernel's uninterruptible wait, e.g. an fsync) every `everyMs` ms, until its stdin
 * closes; then prints one JSON line per sample: `{ ms, r: { label: threads R }, d: { label:
 * threads D } }` (ms on the monotonic clock, `performance.timeOrigin + performance.now()`).
 * A label ending in `/main` counts the process's main thread only. Being a process of its own,
 * it never shows as running in the processes it watches (the emulator runs in the benchmark's).
 */
import { readdirSync, readFileSync } from 'node:fs';

const everyMs = Number(process.argv[2]);
const targets = process.argv.slice(3).map((a) => {
  const [label, pid] = a.split('=') as [string, string];
  return { label, pid: Number(pid), mainOnly: label.endsWith('/main') };
});

interface StateSample {
  ms: number;
  r: Record<string, number>;
  d: Record<string, number>;
}

function stateOf(path: string): string | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    return text[text.lastIndexOf(')') + 2];
  } catch {
    return undefined;
  }
}

const tidsOf = new Map<number, { at: number; tids: string[] }>();
function tids(pid: number, now: number): string[] {
  const known = tidsOf.get(pid);
  if (known !== undefined && now - known.at < 50) return known.tids;
  let list: string[] = [];
  try {
    list = readdirSync(`/proc/${pid}/task`);
  } catch {
    // gone
  }
  tidsOf.set(pid, { at: now, tids: list });
  return list;
}

/** Dovecot's imap processes serving the connections (children of the master named in `dovecot=`). */
let dovecotKids: { at: number; pids: number[] } = { at: -Infinity, pids: [] };
function imapChildren(master: number, now: number): number[] {
  if (now - dovecotKids.at < 100) return dovecotKids.pids;
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const text = readFileSync(`/proc/${e}/stat`, 'utf8');
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
      if (Number(f[1]) === master) pids.push(Number(e));
    } catch {
      // gone
    }
  }
  dovecotKids = { at: now, pids: [master, ...pids] };
  return dovecotKids.pids;
}

const out: StateSample[] = [];
const take = () => {
  const now = performance.now();
  const s: StateSample = { ms: performance.timeOrigin + now, r: {}, d: {} };
  for (const t of targets) {
    let r = 0;
    let d = 0;
    const pids = t.label === 'dovecot' ? imapChildren(t.pid, now) : [t.pid];
    for (const pid of pids) {
      for (const tid of t.mainOnly ? [String(pid)] : tids(pid, now)) {
        const st = stateOf(`/proc/${pid}/task/${tid}/stat`);
        if (st === 'R') r++;
        else if (st === 'D') d++;
      }
    }
    s.r[t.label] = r;
    s.d[t.label] = d;
  }
  out.push(s);
};
const timer = setInterval(take, everyMs);
process.stdin.resume();
process.stdin.on('end', () => {
  clearInterval(timer);
  process.stdout.write(out.map((s) => JSON.stringify(s)).join('\n') + '\n');
});
