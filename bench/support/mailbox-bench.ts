/**
 * What the benchmarks of the API mailbox kinds (bench/graph.ts, bench/gmail.ts) share: the
 * options (`--mailboxes 10 --messages 1000 --attachment-kb 100 --runs 1 --no-imap`), a
 * `mailgate serve` run timed until the emulator holds every message (mailgate's CPU from its
 * process, the stand-in's and emulator's from this one), the same messages read from Dovecot
 * as the IMAP floor, and the rounds with their figures. The kind says how it runs and what it
 * prints beside its reference.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmulator } from '../../src/emulator/index.js';
import { cpuOf } from './cpu.js';
import { startBenchDovecot } from './dovecot.js';

const CLI = fileURLToPath(new URL('../../cli/mailgate.js', import.meta.url));

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
  return v;
}

export const MAILBOXES = arg('mailboxes', 10);
export const MESSAGES = arg('messages', 1000);
export const ATTACHMENT = arg('attachment-kb', 100) * 1024;
export const RUNS = arg('runs', 1);
export const TOTAL = MAILBOXES * MESSAGES;

export interface Run {
  seconds: number;
  /** mailgate's CPU seconds. */
  cpu: number;
  /** CPU seconds of this process meanwhile: the stand-in (or none) and the emulator. */
  peers: number;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const f = (n: number, d = 1) => n.toFixed(d);

/** Runs `mailgate serve` on `config` until the emulator holds `TOTAL` comments. */
async function serve(dir: string, config: string[], emulatorComments: () => number): Promise<Run> {
  writeFileSync(join(dir, 'mailgate.yaml'), `${config.join('\n')}\n`);
  const child = spawn(process.execPath, [CLI, 'serve', '--config', join(dir, 'mailgate.yaml')], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('serving on')) resolve();
    });
    child.once('exit', () => reject(new Error(`mailgate serve exited:\n${err.slice(-2000)}`)));
  });
  const t0 = performance.now();
  const cpu0 = cpuOf(child.pid!);
  const self0 = process.cpuUsage();
  while (emulatorComments() < TOTAL) await new Promise((r) => setTimeout(r, 50));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuOf(child.pid!) - cpu0;
  const self = process.cpuUsage(self0);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return { seconds, cpu, peers: (self.user + self.system) / 1e6 };
}

/**
 * One run of `mailgate serve` against an emulator, in a fresh directory: `adapters` is the
 * configuration's adapters line for the emulator's route `bench` (source `bench/<name>`).
 */
export async function serveRun(name: string, adapters: (dir: string) => string): Promise<Run> {
  const emu = createEmulator({ logger: false, token: 'bench-token', autoCreateSources: true });
  const url = await emu.listen(0, '127.0.0.1');
  const dir = mkdtempSync(join(tmpdir(), `mailgate-bench-${name}-`));
  try {
    return await serve(
      dir,
      [
        `store: sqlite:${join(dir, 'mailgate.db')}`,
        `api: { url: ${url}, token: "bench-token" }`,
        'server: { listen: 127.0.0.1:0 }',
        'log_level: warn',
        `routes: [{ name: bench, source: bench/${name} }]`,
        adapters(dir),
      ],
      () => emu.stats().comments,
    );
  } finally {
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same messages (`raws(m)`: mailbox m's raw bytes) appended to Dovecot and read by IMAP: the floor to compare with. */
async function imapRun(raws: (m: number) => Buffer[]): Promise<Run> {
  const dovecot = await startBenchDovecot({ connections: MAILBOXES + 10 });
  try {
    for (let m = 0; m < MAILBOXES; m++) dovecot.addUser(`bench${m}`, `pw-bench${m}`);
    for (let m = 0; m < MAILBOXES; m++) dovecot.fill(`bench${m}`, raws(m));
    const accounts = Array.from(
      { length: MAILBOXES },
      (_, m) =>
        `{ name: bench${m}, route: bench, host: ${dovecot.host}, port: ${dovecot.port}, secure: false, auth: { user: bench${m}, pass: pw-bench${m} } }`,
    ).join(', ');
    return await serveRun('imap', () => `adapters: { imap: [${accounts}] }`);
  } finally {
    await dovecot.stop();
  }
}

/** The rounds of a kind's benchmark (its run, then IMAP's unless --no-imap), then its figures and the CPU beside IMAP's. */
export async function mailboxBench<R extends Run>(
  kind: string,
  run: () => Promise<R>,
  raws: (m: number) => Buffer[],
  report: (median: R, runs: R[]) => void,
): Promise<void> {
  console.log(
    `bench:${kind} — ${MAILBOXES} mailboxes × ${MESSAGES} messages (30 % with a ${ATTACHMENT / 1024} KiB attachment), ${RUNS} run(s), load ${f(loadavg()[0]!, 2)}`,
  );
  const runs: R[] = [];
  const imap: Run[] = [];
  for (let r = 0; r < RUNS; r++) {
    const g = await run();
    console.log(
      `  run ${r + 1}: ${kind} ${f(TOTAL / g.seconds)} msg/s in ${f(g.seconds)} s; CPU s: mailgate ${f(g.cpu)}, stand-in + emulator ${f(g.peers)}`,
    );
    runs.push(g);
    if (process.argv.includes('--no-imap')) continue;
    const i = await imapRun(raws);
    console.log(
      `  run ${r + 1}: imap  ${f(TOTAL / i.seconds)} msg/s in ${f(i.seconds)} s; CPU s: mailgate ${f(i.cpu)}, emulator ${f(i.peers)}`,
    );
    imap.push(i);
  }
  console.log('');
  report(runs[Math.floor(runs.length / 2)]!, runs);
  console.log(`  mailgate CPU/message  ${f((median(runs.map((x) => x.cpu)) / TOTAL) * 1e3, 3)} ms (${kind})`);
  if (imap.length > 0) {
    console.log(
      `                        ${f((median(imap.map((x) => x.cpu)) / TOTAL) * 1e3, 3)} ms (imap, the same messages from Dovecot; ${f(TOTAL / median(imap.map((x) => x.seconds)))} msg/s)`,
    );
  }
}
