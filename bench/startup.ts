/**
 * `npm run bench:startup`: the CPU a short mailgate command costs from its process start to its
 * exit, beside Node's own start (`node -e 0`, the floor): `--version`, `--help`, `status` of an
 * existing store (named by `--store`, then by `--config`), and `import` of one message into a
 * fresh SQLite store (the emulator in its own process, as bench:import has it). A serial cost
 * like this is paid by every import before its first message. Each run writes its process CPU
 * (all threads) and its main thread's at exit (support/cpu-at-exit.ts); medians of
 * MAILGATE_BENCH_ROUNDS runs (default 12).
 *
 * `--vs-cli PATH` (or MAILGATE_BENCH_VS_CLI): another build's CLI file (`dist/cli/mailgate.js`, or `dist/src/cli/main.js` of a build before the bundle); the builds
 * then run in turn (A, B, A, B, …) and the ratio of process CPU is the median of each pair's.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulatorProcess } from './support/emulator-process.js';

const CLI = process.env['MAILGATE_BENCH_CLI'] ?? fileURLToPath(new URL('../cli/mailgate.js', import.meta.url));
const VS_CLI = option('vs-cli') ?? process.env['MAILGATE_BENCH_VS_CLI'];
const ROUNDS = Number(process.env['MAILGATE_BENCH_ROUNDS'] ?? '12');
const PRELOAD = new URL('./support/cpu-at-exit.js', import.meta.url).href;
const SAMPLE = fileURLToPath(new URL('../../samples/files/eml/01-hello.eml', import.meta.url));
const TOKEN = 'bench-token-0123456789';
const CPU_LINE = /MAILGATE_BENCH_CPU process=([\d.]+) main=([\d.]+)/;

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

interface Cpu {
  process: number;
  main: number;
}

/** `node --import <preload> [cli] args`: its CPU at exit, in ms; a failed command is an error. */
function run(args: string[], cwd: string): Promise<Cpu> {
  const child = spawn(process.execPath, ['--import', PRELOAD, ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => {
      const m = CPU_LINE.exec(stderr);
      if (code !== 0 || m === null) reject(new Error(`node ${args.join(' ')} failed (exit ${code}): ${stderr.slice(-2000)}`));
      else resolve({ process: Number(m[1]), main: Number(m[2]) });
    }),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One case: its arguments for a build (`b`: the build's index; `n` numbers each run, e.g. for a fresh store). */
interface Case {
  name: string;
  args: (cli: string, n: number, b: number) => string[];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-startup-'));
  const emulator = await startEmulatorProcess(CLI, dir, TOKEN, 'bench/start');
  try {
    const eml = join(dir, 'one.eml');
    copyFileSync(SAMPLE, eml);
    const fresh = (n: number) => {
      const d = join(dir, `import-${n}`);
      mkdirSync(d);
      return `sqlite:${join(d, 'mailgate.db')}`;
    };
    const importArgs = (cli: string, store: string) => [
      cli,
      'import',
      eml,
      '--store',
      store,
      '--api-url',
      emulator.url,
      '--token',
      TOKEN,
      '--source',
      'bench/start',
      '--yes',
    ];
    const clis = VS_CLI === undefined ? [CLI] : [CLI, VS_CLI];
    // The store `status` reads, one per build, each made by its own build (one message imported,
    // not timed): a build may not read a newer build's schema.
    const stores = clis.map((_, b) => join(dir, `status-${b}.db`));
    const configs = clis.map((_, b) => join(dir, `mailgate-${b}.yaml`));
    for (const [b, cli] of clis.entries()) {
      await run(importArgs(cli, `sqlite:${stores[b]}`), dir);
      writeFileSync(configs[b]!, `store: sqlite:${stores[b]}\nroutes: [{ name: r, source: bench/start }]\n`);
    }
    const cases: Case[] = [
      { name: "node -e 0 (Node's own start)", args: () => ['-e', '0'] },
      { name: 'mailgate --version', args: (cli) => [cli, '--version'] },
      { name: 'mailgate --help', args: (cli) => [cli, '--help'] },
      { name: 'mailgate status --store', args: (cli, _, b) => [cli, 'status', '--store', `sqlite:${stores[b]}`] },
      { name: 'mailgate status --config', args: (cli, _, b) => [cli, 'status', '--config', configs[b]!] },
      { name: 'mailgate import (1 message, fresh store)', args: (cli, n) => importArgs(cli, fresh(n)) },
    ];
    console.log(`start-up CPU, median of ${ROUNDS} runs each, in ms (process: every thread; main: the main thread)`);
    console.log(`  this build: ${CLI}${VS_CLI === undefined ? '' : `\n  reference:  ${VS_CLI} (runs in turn with this build)`}`);
    let n = 0;
    for (const c of cases) {
      const runs = clis.map(() => [] as Cpu[]);
      for (let r = 0; r < ROUNDS; r++) for (const [i, cli] of clis.entries()) runs[i]!.push(await run(c.args(cli, n++, i), dir));
      const fig = (xs: Cpu[]) => `${median(xs.map((x) => x.process)).toFixed(0)} / ${median(xs.map((x) => x.main)).toFixed(0)}`;
      const ratio = runs.length < 2 ? '' : `  ratio ${median(runs[0]!.map((x, i) => x.process / runs[1]![i]!.process)).toFixed(2)}`;
      console.log(`  ${c.name.padEnd(44)} ${fig(runs[0]!)}${runs.length < 2 ? '' : `   reference ${fig(runs[1]!)}${ratio}`}`);
    }
  } finally {
    emulator.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
