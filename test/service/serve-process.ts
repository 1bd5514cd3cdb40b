/** Runs the built `mailgate serve` as a child process and reads what it prints. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
/** What users run: the bundled executable (package.json `bin`). */
export const CLI = join(ROOT, 'dist/cli/mailgate.js');

export interface ServeProcess {
  child: ChildProcess;
  /** Base URL of the HTTP server, once it listens. */
  url: Promise<string>;
  /** The admin key printed by the embedded defaults. */
  adminKey: Promise<string>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
}

/** The processes spawnServe started, each with what it has printed so far. */
const started: Array<{ child: ChildProcess; printed: () => string }> = [];

/** The last lines each serve process of the test printed: a wait that timed out says where the service stood. */
function lastLines(lines = 30): string {
  return started
    .map(({ child, printed }) => {
      const state = child.exitCode === null && child.signalCode === null ? 'running' : 'exited';
      return `--- serve pid ${child.pid} (${state}), last lines:\n${printed().trimEnd().split('\n').slice(-lines).join('\n')}`;
    })
    .join('\n');
}

/** Kills every process spawnServe started that still runs (after a test that failed half-way). */
export function killLeftovers(): void {
  for (const { child } of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export function spawnServe(args: string[], options: { cwd: string; env?: Record<string, string> }): ServeProcess {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
  const child = spawn(process.execPath, [CLI, 'serve', ...args], {
    cwd: options.cwd,
    env: { PATH: process.env['PATH'] ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let resolveUrl!: (u: string) => void;
  let rejectUrl!: (e: Error) => void;
  let resolveKey!: (k: string) => void;
  const url = new Promise<string>((res, rej) => ((resolveUrl = res), (rejectUrl = rej)));
  url.catch(() => undefined);
  const adminKey = new Promise<string>((r) => (resolveKey = r));
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    const u = /serving on (http:\/\/\S+)/.exec(err);
    if (u) resolveUrl(u[1]!);
    const k = /admin key: (\S+)/.exec(err);
    if (k) resolveKey(k[1]!);
  });
  started.push({ child, printed: () => err + out });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  void exit.then(() => rejectUrl(new Error(`serve exited before listening:\n${err}\n${out.slice(-4000)}`)));
  return { child, url, adminKey, exit, stdout: () => out, stderr: () => err };
}

export async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 90_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  const serves = started.length > 0 ? `\n${lastLines()}` : '';
  throw new Error(`timed out waiting for ${what}${serves}`);
}
