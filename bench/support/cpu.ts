/**
 * CPU seconds of processes on this machine, from /proc: a benchmark's figures beside where the
 * cores went (on a 2-core machine the store server and the emulator share them with mailgate).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticks: number | undefined;

/** Clock ticks per second (`getconf CLK_TCK`; 100 where getconf is missing). */
export function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** utime, stime, cutime, cstime of `pid` in clock ticks, and its parent; undefined once it is gone. */
function stat(pid: number | 'self'): { own: number; children: number; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]), ppid: Number(f[1]) };
  } catch {
    return undefined;
  }
}

/** CPU seconds of `pid` itself (0 once it is gone). */
export function cpuOf(pid: number): number {
  return (stat(pid)?.own ?? 0) / clockTicks();
}

/**
 * CPU seconds of the children this process has waited for (`getrusage(RUSAGE_CHILDREN)`):
 * the difference around one `spawn` … `exit` is exactly that child's CPU.
 */
export function reapedChildrenCpu(): number {
  return (stat('self')?.children ?? 0) / clockTicks();
}

/** CPU seconds of `pid`, its live children and every child it has reaped (e.g. a postmaster and its backends). */
export function cpuOfTree(pid: number): number {
  const root = stat(pid);
  if (root === undefined) return 0;
  let total = root.own + root.children;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (s !== undefined && s.ppid === pid) total += s.own + s.children;
  }
  return total / clockTicks();
}

/**
 * CPU seconds of each thread of a process (`/proc/<pid>/task/<tid>/stat`), by thread id; the
 * main thread's id is the pid. Threads that ended are not counted.
 */
export function cpuByThread(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
      // After the name, utime and stime are fields 14 and 15: indexes 11 and 12.
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) / clockTicks());
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}
