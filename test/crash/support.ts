/**
 * Crash-test helpers: a generated mbox, the built CLI run as a child process, a seeded PRNG
 * for kill points.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What users run: the bundled executable (package.json `bin`). */
export const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'mailgate.js');

/** An mbox of `n` distinct small messages. */
export function writeMbox(file: string, n: number, tag = 'crash'): void {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    parts.push(
      `From sender${i % 13}@example.com Mon Jan  1 00:00:00 2024\n` +
        `From: Sender ${i % 13} <sender${i % 13}@example.com>\nTo: support@example.com\n` +
        `Subject: ${tag} message ${i}\nMessage-ID: <${tag}-${i}@example.com>\n` +
        `Date: Mon, 1 Jan 2024 00:${String(i % 60).padStart(2, '0')}:00 +0000\n\n` +
        `Hello, this is ${tag} message number ${i}. Please help with order ${1000 + i}.\n\n`,
    );
  }
  writeFileSync(file, parts.join(''));
}

export { prng } from '../../src/prng.js';

export interface Run {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

export function runCli(args: string[], cwd: string, env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, exited };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** When to kill one run: after `ms`, or as soon as `ready()` is true (polled every 5 ms), whichever comes first. */
export interface KillPoint {
  ms?: number;
  ready?: () => boolean;
}

async function reached(point: KillPoint, exited: Promise<unknown>): Promise<boolean> {
  let done = false;
  void exited.then(() => (done = true));
  const due = point.ms === undefined ? Infinity : Date.now() + point.ms;
  while (!done && Date.now() < due && !(point.ready?.() ?? false)) await sleep(Math.min(5, Math.max(due - Date.now(), 0)));
  return !done;
}

/**
 * Runs the import and kills it with SIGKILL at each kill point in turn (unless it finishes
 * first), then lets it run to completion. Returns the final result and how many times it was
 * really killed.
 */
export async function importWithKills(args: string[], cwd: string, points: Array<() => KillPoint>, onKill?: () => void) {
  let killed = 0;
  for (const point of points) {
    const run = runCli(args, cwd);
    if (!(await reached(point(), run.exited))) return { result: await run.exited, killed };
    run.child.kill('SIGKILL');
    onKill?.();
    await run.exited;
    killed++;
  }
  const final = await runCli(args, cwd).exited;
  return { result: final, killed };
}
