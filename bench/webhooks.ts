/**
 * `npm run bench:webhooks`: push intake over HTTP, end to end. Concurrent clients post signed
 * `raw` webhook requests of about 5 KB (each message unique) to a spawned `mailgate serve`
 * (SQLite, synchronous=FULL, the default) delivering to the emulator in its own process, and
 * the same requests to the floor (bench/support/push-floor.ts: the same HTTP stack and
 * endpoint, signature check included, with a sink that stores nothing), in the same run,
 * alternating round by round so both see the same machine load.
 *
 * Prints per round and as medians: accepted/s and p50/p99 time to the 2xx of both, their
 * ratio, and the CPU seconds of mailgate, the emulator, the floor and this load generator.
 *
 * Rounds × requests × concurrency: MAILGATE_BENCH_ROUNDS (3) × MAILGATE_BENCH_REQUESTS (5000)
 * × MAILGATE_BENCH_CONCURRENCY (32). MAILGATE_BENCH_WORKERS sets parsing.workers of the
 * service (default: the service's own, cores - 1).
 *
 * `--cpu-prof-dir DIR`: run `mailgate serve` under `--cpu-prof` (its worker threads too) with the
 * profiles written to DIR. The service then stops without draining delivery (`--drain-ms 0`):
 * a drain longer than the stop's grace would end in SIGKILL, which writes no profile.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simulator } from '../adapters/index.js';
import { cpuOf } from './support/cpu.js';
import { quantile, runLoad, type LoadRequest, type LoadResult } from './support/http-load.js';

/** MAILGATE_BENCH_CLI: another build's CLI file (`dist/cli/mailgate.js`, or `dist/src/cli/main.js` of a build before the bundle) to measure with this harness (A/B). */
const CLI = process.env['MAILGATE_BENCH_CLI'] ?? fileURLToPath(new URL('../cli/mailgate.js', import.meta.url));
const FLOOR = fileURLToPath(new URL('./support/push-floor.js', import.meta.url));

function envInt(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${v}`);
  return n;
}
const ROUNDS = envInt('MAILGATE_BENCH_ROUNDS', 3);
const REQUESTS = envInt('MAILGATE_BENCH_REQUESTS', 5_000);
const CONCURRENCY = envInt('MAILGATE_BENCH_CONCURRENCY', 32);
const WORKERS = process.env['MAILGATE_BENCH_WORKERS'] === undefined ? undefined : envInt('MAILGATE_BENCH_WORKERS', 1);
/** Requests to each target before the rounds (JIT, SQLite cache, connections); not counted. */
const WARMUP = 1_000;
const TOKEN = 'bench-token-0123456789';
const SECRET = 'bench-hmac-secret-0123456789abcdef';
const ADMIN_KEY = 'bench-admin-key-0123456789';
const PATH = '/webhooks/raw-in';
const PROFILE = ((i) => (i < 0 ? undefined : process.argv[i + 1]))(process.argv.indexOf('--cpu-prof-dir'));

const PARAGRAPH =
  'Hello team,\r\nthe invoice for last month looks wrong: we were charged twice for the same order.\r\nCould you check?\r\n\r\n';

/** A distinct message of about 5 KB. `run` keeps messages of different runs apart (each must be new to the store). */
function message(run: number, i: number): Buffer {
  const id = `${run}-${i}`;
  return Buffer.from(
    `Received: from mx.example.com (mx.example.com [203.0.113.9])\r\nFrom: Customer ${id} <c${id}@example.com>\r\n` +
      `To: support@acme.example\r\nSubject: Invoice question ${id}\r\nMessage-ID: <bench-${id}@example.com>\r\n` +
      `Date: Mon, 04 Mar 2024 09:00:00 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${PARAGRAPH.repeat(40)}Ref ${id}\r\n`,
  );
}

/** Starts `args` with node and resolves with the URL once `pattern` shows on the stream. */
function startChild(
  args: string[],
  cwd: string,
  pattern: RegExp,
  stream: 'stdout' | 'stderr',
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', stream === 'stdout' ? 'pipe' : 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let text = '';
    const source = stream === 'stdout' ? child.stdout! : child.stderr!;
    source.on('data', (d: Buffer) => {
      if (text.length < 65_536) text += d.toString();
      const m = pattern.exec(text);
      if (m) resolve({ child, url: m[1]! });
    });
    if (stream === 'stdout') child.stderr!.on('data', (d: Buffer) => (text.length < 65_536 ? (text += d.toString()) : undefined));
    child.on('exit', (code) => reject(new Error(`${args[1] ?? args[0]} exited (${code}) before listening:\n${text.slice(-4000)}`)));
  });
}

async function startEmulator(dir: string): Promise<{ child: ChildProcess; url: string }> {
  const emu = await startChild([CLI, 'emulator', '--port', '0', '--token', TOKEN], dir, /listening on (http:\/\/\S+)/, 'stdout');
  const res = await fetch(`${emu.url}/api/v1/sources/bench/mail`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: '{"source":{}}',
  });
  if (!res.ok) throw new Error(`cannot create the source: HTTP ${res.status}`);
  return emu;
}

function writeConfig(dir: string, emulatorUrl: string): string {
  const path = join(dir, 'mailgate.yaml');
  writeFileSync(
    path,
    [
      `store: sqlite:${join(dir, 'mailgate.db')}`,
      `api: { url: ${emulatorUrl}, token: ${TOKEN} }`,
      // Every client of the bench posts from one address: its per-client cap must admit them all.
      `server: { listen: 127.0.0.1:0, api_keys: [${ADMIN_KEY}], push: { max_per_client: ${CONCURRENCY} } }`,
      'routes: [{ name: hooks, source: bench/mail }]',
      ...(WORKERS === undefined ? [] : [`parsing: { workers: ${WORKERS} }`]),
      'adapters:',
      '  webhooks:',
      `    - { name: raw-in, provider: raw, route: hooks, hmac_secret: ${SECRET} }`,
      '',
    ].join('\n'),
  );
  return path;
}

/** SIGTERM, then SIGKILL after 10 s (serve drains delivery first). */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Figures {
  rate: number;
  p50: number;
  p99: number;
  failed: Record<string, number>;
}

const figures = (r: LoadResult): Figures => ({
  rate: r.ok / r.seconds,
  p50: quantile(r.latencies, 0.5),
  p99: quantile(r.latencies, 0.99),
  failed: r.failed,
});
const show = (f: Figures) =>
  `${f.rate.toFixed(0).padStart(6)} msg/s  p50 ${f.p50.toFixed(1).padStart(6)} ms  p99 ${f.p99.toFixed(1).padStart(6)} ms` +
  (Object.keys(f.failed).length > 0 ? `  FAILED ${JSON.stringify(f.failed)}` : '');

async function queued(url: string): Promise<number> {
  const res = await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const status = (await res.json()) as { routes: Array<{ outbox: { queued: number } }> };
  return status.routes[0]?.outbox.queued ?? -1;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-webhooks-'));
  const children: ChildProcess[] = [];
  try {
    const { simulator: sim } = await simulator();
    const entry = sim.entryFromSecrets('raw', { hmacSecret: SECRET }, 'http://127.0.0.1/');
    let runs = 0;
    /** The requests of one load run: each signed at send time, each message new. */
    const requests = () => {
      const run = (runs += 1);
      return (i: number): LoadRequest => {
        const req = sim.request(entry, message(run, i), { url: PATH, now: Date.now() });
        return { path: PATH, headers: req.headers, body: req.body };
      };
    };
    const emu = await startEmulator(dir);
    children.push(emu.child);
    const profiling = PROFILE === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`];
    const serveArgs = [CLI, 'serve', '--config', writeConfig(dir, emu.url), ...(PROFILE === undefined ? [] : ['--drain-ms', '0'])];
    const serve = await startChild([...profiling, ...serveArgs], dir, /serving on (http:\/\/\S+)/, 'stderr');
    children.push(serve.child);
    const floor = await startChild([FLOOR, SECRET], dir, /floor listening on (http:\/\/\S+)/, 'stdout');
    children.push(floor.child);

    const cores = availableParallelism();
    console.log(
      `node ${process.version}, ${cores} cores, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} at start; ` +
        `${ROUNDS} rounds × ${REQUESTS} requests of ${message(0, 0).length} B, concurrency ${CONCURRENCY}, ` +
        `parsing.workers ${WORKERS ?? `default (${Math.max(1, cores - 1)})`}`,
    );
    await runLoad(floor.url, Math.min(WARMUP, REQUESTS), CONCURRENCY, requests());
    await runLoad(serve.url, Math.min(WARMUP, REQUESTS), CONCURRENCY, requests());

    const rows: Array<{ floor: Figures; durable: Figures; cpu: Record<string, number>; queued: number }> = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const floorCpu0 = cpuOf(floor.child.pid!);
      const self0 = process.cpuUsage();
      const f = figures(await runLoad(floor.url, REQUESTS, CONCURRENCY, requests()));
      const floorCpu = cpuOf(floor.child.pid!) - floorCpu0;
      const selfFloor = process.cpuUsage(self0);

      const [mg0, emu0] = [cpuOf(serve.child.pid!), cpuOf(emu.child.pid!)];
      const self1 = process.cpuUsage();
      const d = figures(await runLoad(serve.url, REQUESTS, CONCURRENCY, requests()));
      const selfDurable = process.cpuUsage(self1);
      const cpu = {
        mailgate: cpuOf(serve.child.pid!) - mg0,
        emulator: cpuOf(emu.child.pid!) - emu0,
        floor: floorCpu,
        clientFloor: (selfFloor.user + selfFloor.system) / 1e6,
        clientDurable: (selfDurable.user + selfDurable.system) / 1e6,
      };
      const q = await queued(serve.url);
      rows.push({ floor: f, durable: d, cpu, queued: q });
      console.log(`round ${r}`);
      console.log(`  floor (no store)         ${show(f)}   CPU: floor ${cpu.floor.toFixed(1)} s, clients ${cpu.clientFloor.toFixed(1)} s`);
      console.log(
        `  durable (mailgate serve) ${show(d)}   CPU: mailgate ${cpu.mailgate.toFixed(1)} s, emulator ${cpu.emulator.toFixed(1)} s, ` +
          `clients ${cpu.clientDurable.toFixed(1)} s; outbox queued after: ${q}`,
      );
    }
    const pick = (side: 'floor' | 'durable', k: 'rate' | 'p50' | 'p99') => median(rows.map((x) => x[side][k]));
    const cpuMedian = (k: string) => median(rows.map((x) => x.cpu[k]!)).toFixed(1);
    const durable = { rate: pick('durable', 'rate'), p50: pick('durable', 'p50'), p99: pick('durable', 'p99'), failed: {} };
    const floorMedian = { rate: pick('floor', 'rate'), p50: pick('floor', 'p50'), p99: pick('floor', 'p99'), failed: {} };
    console.log(`median of ${ROUNDS} rounds`);
    console.log(`  floor (no store)         ${show(floorMedian)}`);
    console.log(`  durable (mailgate serve) ${show(durable)}`);
    const ratio = ((100 * durable.rate) / floorMedian.rate).toFixed(0);
    console.log(`  durable / floor: ${ratio}% of the rate, p99 ×${(durable.p99 / floorMedian.p99).toFixed(1)}`);
    console.log(
      `  CPU per round: mailgate ${cpuMedian('mailgate')} s, emulator ${cpuMedian('emulator')} s, ` +
        `load generator ${cpuMedian('clientDurable')} s ` +
        `(floor ${cpuMedian('floor')} s + load generator ${cpuMedian('clientFloor')} s) on ${cores} cores`,
    );
    const met = durable.rate >= 1_500 && durable.p99 <= 100;
    console.log(`  target >= 1500 msg/s durable with p99 <= 100 ms: ${met ? 'met' : 'NOT met'}`);
    console.log(
      `  load average at end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await Promise.all(children.map(stop));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
