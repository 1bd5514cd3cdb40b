/**
 * Many IMAP mailboxes in one process (`npm run bench:mailboxes`): one Dovecot with N users,
 * one `mailgate serve` (spawned CLI, SQLite store in a temporary directory) with one IMAP account
 * per user, the emulator in this process. Prints, each beside its target:
 * - the process's RSS with no account (a separate short run) and the time until all N idle;
 * - peak and steady RSS with N idle, and the RSS per mailbox above the baseline;
 * - CPU of mailgate (% of one core, from /proc/<pid>/stat) over an idle window;
 * - APPEND → API accepted latency (p50/p99) while mail arrives at random mailboxes at a fixed
 *   rate: from the server's OK to the APPEND until the emulator stores the comment;
 * - the time until all N idle again after Dovecot is killed and started (paced reconnects);
 * - how long SIGTERM takes to stop the service.
 *
 *   node dist/bench/mailboxes.js [--accounts 1000] [--rate 20] [--append-s 30] [--idle-s 30]
 *
 * The machine's load (`uptime`) is printed before and after: other work on it moves the figures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ImapFlow } from 'imapflow';
import { buildEmulatorApp } from '../src/emulator/app.js';
import { FaultPlan } from '../src/emulator/faults.js';
import { resolveOptions } from '../src/emulator/options.js';
import { EmulatorState } from '../src/emulator/state.js';
import { cpuOf, cpuOfTree } from './support/cpu.js';
import { startBenchDovecot, type BenchDovecot } from './support/dovecot.js';

const CLI = fileURLToPath(new URL('../cli/mailgate.js', import.meta.url));
const ADMIN = `bench-admin-${randomBytes(8).toString('hex')}`;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

interface Emu {
  url: string;
  token: string;
  /** Comment id → when the emulator stored it (performance.now()). */
  stored: Map<string, number>;
  close(): Promise<void>;
}

/** The emulator, with the time each comment is stored. */
async function startEmu(): Promise<Emu> {
  const token = randomBytes(8).toString('hex');
  const state = new EmulatorState();
  const stored = new Map<string, number>();
  const commit = state.commit.bind(state);
  state.commit = (op) => {
    commit(op);
    if (op.op === 'comments') for (const c of op.comments) if (!stored.has(c.id)) stored.set(c.id, performance.now());
  };
  const app = buildEmulatorApp(state, resolveOptions({ token, autoCreateSources: true, logger: false }), new FaultPlan([]));
  const address = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
  return { url: `${address.protocol}//${address.host}`, token, stored, close: () => app.close() };
}

interface Serve {
  child: ChildProcess;
  url: string;
  dir: string;
  stderr: () => string;
}

function config(dir: string, emu: Emu, d: BenchDovecot | undefined, accounts: number): string {
  const lines = [
    `store: sqlite:${join(dir, 'mailgate.db')}`,
    `api: { url: ${emu.url}, token: "${emu.token}" }`,
    `server: { listen: 127.0.0.1:0, api_keys: ["${ADMIN}"] }`,
    'log_level: warn',
    'delivery: { flush_ms: 0 }',
    'routes: [{ name: bench, source: bench/inbox }]',
  ];
  if (d !== undefined && accounts > 0) {
    lines.push('adapters:', '  imap:');
    for (let i = 0; i < accounts; i++)
      lines.push(
        `    - { name: mb${i}, route: bench, host: ${d.host}, port: ${d.port}, secure: false, ` +
          `auth: { user: mb${i}, pass: pw${i} }, folders: [INBOX] }`,
      );
  }
  const file = join(dir, 'mailgate.yaml');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

async function startServe(emu: Emu, d: BenchDovecot | undefined, accounts: number): Promise<Serve> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-mailboxes-'));
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config(dir, emu, d, accounts)], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  for (;;) {
    const m = /serving on (http:\/\/\S+)/.exec(err);
    if (m) return { child, url: m[1]!, dir, stderr: () => err };
    if (child.exitCode !== null) throw new Error(`mailgate serve exited with ${child.exitCode}: ${err}`);
    await sleep(20);
  }
}

/** Sends SIGTERM; resolves with how long the process took to exit, in ms. */
async function stopServe(s: Serve): Promise<number> {
  const t0 = performance.now();
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
  const ms = performance.now() - t0;
  rmSync(s.dir, { recursive: true, force: true });
  return ms;
}

async function idleCount(s: Serve): Promise<number> {
  const res = await fetch(`${s.url}/api/status`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const body = (await res.json()) as { adapters: Array<{ kind: string; state?: string }> };
  return body.adapters.filter((a) => a.kind === 'imap' && a.state === 'idle').length;
}

/** Polls until `accounts` are idle; returns the elapsed ms and the peak RSS seen. */
async function untilAllIdle(s: Serve, accounts: number, t0: number, limitMs: number): Promise<number> {
  for (;;) {
    if (s.child.exitCode !== null) throw new Error(`mailgate serve exited: ${s.stderr().slice(-2000)}`);
    if ((await idleCount(s)) >= accounts) return performance.now() - t0;
    if (performance.now() - t0 > limitMs) throw new Error(`not all ${accounts} accounts idle within ${limitMs} ms`);
    await sleep(250);
  }
}

function message(id: string): Buffer {
  return Buffer.from(
    [
      'From: Customer <customer@example.com>',
      'To: support@example.org',
      `Subject: Order ${id}`,
      `Message-ID: <${id}@bench.example>`,
      'Date: Mon, 02 Mar 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Hello, where is order ${id}?`,
      '',
    ].join('\r\n'),
  );
}

async function append(d: BenchDovecot, i: number, raw: Buffer): Promise<void> {
  const c = new ImapFlow({ host: d.host, port: d.port, secure: false, auth: { user: `mb${i}`, pass: `pw${i}` }, logger: false });
  c.on('error', () => undefined);
  await c.connect();
  try {
    await c.append('INBOX', raw);
  } finally {
    await c.logout().catch(() => c.close());
  }
}

const pct = (xs: number[], p: number) =>
  xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

/** APPENDs at `rate`/s to random mailboxes for `seconds`; latencies from the APPEND's OK to the comment stored. */
async function arrivals(d: BenchDovecot, emu: Emu, accounts: number, rate: number, seconds: number): Promise<number[]> {
  const appended = new Map<string, number>();
  const inFlight: Array<Promise<void>> = [];
  const t0 = performance.now();
  const total = Math.round(rate * seconds);
  for (let n = 0; n < total; n++) {
    const due = t0 + (n * 1000) / rate;
    if (due > performance.now()) await sleep(due - performance.now());
    const tag = `mb-${n}-${randomBytes(4).toString('hex')}`;
    const id = Buffer.from(`<${tag}@bench.example>`, 'utf8').toString('hex');
    const box = Math.floor(Math.random() * accounts);
    inFlight.push(append(d, box, message(tag)).then(() => void appended.set(id, performance.now())));
  }
  await Promise.all(inFlight);
  const until = performance.now() + 60_000;
  while ([...appended.keys()].some((id) => !emu.stored.has(id)) && performance.now() < until) await sleep(50);
  const missing = [...appended.keys()].filter((id) => !emu.stored.has(id)).length;
  if (missing > 0) console.log(`  ${missing} of ${total} appended messages not accepted within 60 s`);
  return [...appended].filter(([id]) => emu.stored.has(id)).map(([id, at]) => Math.max(0, emu.stored.get(id)! - at));
}

function row(what: string, value: string, target = ''): void {
  console.log(`  ${what.padEnd(46)} ${value.padStart(14)}   ${target}`);
}

async function main(): Promise<void> {
  const accounts = Math.round(arg('accounts', 1000));
  const rate = arg('rate', 20);
  const appendS = arg('append-s', 30);
  const idleS = arg('idle-s', 30);
  console.log(`mailboxes: ${accounts} IMAP accounts in one mailgate serve; load average before: ${load()}`);
  const emu = await startEmu();
  const d = await startBenchDovecot({ connections: accounts + 200 });
  try {
    d.addUsers(Array.from({ length: accounts }, (_, i) => ({ user: `mb${i}`, pass: `pw${i}` })));
    await sleep(1100); // Dovecot re-reads the passwd-file at most once a second

    console.log('  … baseline run (no account)');
    const base = await startServe(emu, undefined, 0);
    await sleep(3000);
    const baseRss = procStatus(base.child.pid!, 'VmRSS');
    await stopServe(base);

    const t0 = performance.now();
    const s = await startServe(emu, d, accounts);
    const startup = performance.now() - t0;
    const allIdle = await untilAllIdle(s, accounts, t0, 600_000);
    console.log(`  … all ${accounts} idle after ${(allIdle / 1000).toFixed(1)} s; measuring ${idleS} s idle`);
    const pid = s.child.pid!;
    await sleep(2000);
    const cpu0 = cpuOf(pid);
    const dcpu0 = cpuOfTree(d.pid);
    await sleep(idleS * 1000);
    const idleCpu = ((cpuOf(pid) - cpu0) / idleS) * 100;
    const dovecotCpu = ((cpuOfTree(d.pid) - dcpu0) / idleS) * 100;
    const steady = procStatus(pid, 'VmRSS');
    const peak = procStatus(pid, 'VmHWM');
    const perBox = ((steady - baseRss) * 1024) / accounts;

    console.log(`  … appending at ${rate}/s for ${appendS} s`);
    const lat = await arrivals(d, emu, accounts, rate, appendS);
    console.log(`  … restarting Dovecot`);

    // Polled while Dovecot restarts: the lowest idle count proves the accounts saw the drop.
    const r0 = performance.now();
    let lowest = accounts;
    let restarting = true;
    const watch = (async () => {
      while (restarting) {
        lowest = Math.min(lowest, await idleCount(s).catch(() => lowest));
        await sleep(100);
      }
    })();
    await d.restart();
    const restartIdle = await untilAllIdle(s, accounts, r0, 600_000);
    restarting = false;
    await watch;
    const failures = (s.stderr().match(/MaxListenersExceededWarning/g) ?? []).length;
    const stopMs = await stopServe(s);

    console.log(`  (serve start-up until it listens: ${(startup / 1000).toFixed(1)} s; included in the time to all idle)`);
    row('RSS with no account (baseline)', `${baseRss.toFixed(0)} MB`);
    row(`time until all ${accounts} idle`, `${(allIdle / 1000).toFixed(1)} s`, 'target ~30-60 s at 1,000');
    row('peak RSS', `${peak.toFixed(0)} MB`);
    row('steady RSS, all idle', `${steady.toFixed(0)} MB`);
    row('RSS per idle mailbox above baseline', `${perBox.toFixed(0)} KB`, 'target ≤ 1024 KB');
    row(`mailgate CPU while idle (${idleS} s)`, `${idleCpu.toFixed(2)} %`, 'target < 5 % of a core');
    row(`Dovecot CPU meanwhile (all processes)`, `${dovecotCpu.toFixed(2)} %`);
    row(`APPEND → API accepted, ${lat.length} at ${rate}/s, p50`, `${pct(lat, 50).toFixed(0)} ms`);
    row(`APPEND → API accepted, p99`, `${pct(lat, 99).toFixed(0)} ms`, 'target ≤ 2000 ms');
    row(`APPEND → API accepted, max`, `${(lat.length === 0 ? NaN : Math.max(...lat)).toFixed(0)} ms`);
    row('Dovecot killed and started → all idle again', `${(restartIdle / 1000).toFixed(1)} s`, `(${lowest} idle at the lowest)`);
    row('SIGTERM → exited', `${(stopMs / 1000).toFixed(1)} s`);
    row('MaxListenersExceededWarning on stderr', `${failures}`, 'target 0');
  } finally {
    await d.stop();
    await emu.close();
    console.log(`load average after: ${load()}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
