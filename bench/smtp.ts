/**
 * SMTP intake throughput: `connections` SMTP clients at once, each sending messages of about
 * 5 KB one after another (MAIL, RCPT, DATA pipelined; support/smtp-drive.ts), to
 *  1. a plain smtp-server in this process that reads the message and answers 250 storing
 *     nothing: the protocol's own cost on this machine (once);
 *  2. the smtp adapter over a real SQLite store (synchronous=FULL, fresh file) through the
 *     parse pool and the intake: each 250 means the message is durable (support/smtp-durable.ts),
 *     `--rounds` times, each round in a fresh process.
 *
 *   node dist/bench/smtp.js [messages=5000] [connections=8] [--rounds 3] [--workers N] [--vs-cli PATH]
 *
 * Prints messages/s (250 received) and time from the end of DATA to the 250, p50/p99, per round
 * and as medians beside the targets, with the CPU per message of the process (senders left out)
 * and of the listener's thread: on a shared machine CPU per message is the steadier figure.
 * `--vs-cli` (or MAILGATE_BENCH_CLI): another build's CLI file (`dist/cli/mailgate.js`, or `dist/src/cli/main.js` of a build before the bundle); its durable rounds
 * run under this same harness, interleaved with this build's (A, B, A, B, …). `--workers`: parse
 * worker threads (`parsing.workers`; default the pool's, one fewer than the cores), both builds.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SMTPServer } from 'smtp-server';
import { fsyncMedianMs } from './support/fsync.js';
import { drive, type Figures } from './support/smtp-drive.js';
import { durableRun, OWN_DIST, type DurableFigures } from './support/smtp-durable.js';

/** What issue-level targets ask of the durable path (messages/s median, p99 to the 250 in ms). */
const TARGET = { perSecond: 1_700, p99Ms: 20 };

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

/** The positional arguments (flags and their values left out). */
function positional(i: number, fallback: number): number {
  const args = process.argv.slice(2).filter((a, j, all) => !a.startsWith('--') && !(all[j - 1] ?? '').startsWith('--'));
  const v = args[i];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`argument ${i + 1} must be a positive integer, got ${v}`);
  return n;
}

const MESSAGES = positional(0, 5_000);
const CONNECTIONS = positional(1, 8);
const ROUNDS = Number(option('rounds') ?? 3);
const WORKERS = option('workers');
if (WORKERS !== undefined && !/^[1-9][0-9]?$/.test(WORKERS)) throw new Error(`--workers must be a positive integer, got ${WORKERS}`);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function baseline(): Promise<Figures> {
  const server = new SMTPServer({
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    logger: false,
    disableReverseLookup: true,
    size: 25 * 1024 * 1024,
    onData(stream, _session, cb) {
      stream.on('data', () => undefined);
      stream.on('end', () => cb(null, 'OK'));
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as { port: number }).port;
  try {
    return await drive({ port, run: 'plain', messages: MESSAGES, connections: CONNECTIONS });
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** One durable round in a fresh process (node flags such as --cpu-prof passed on), against the build at `dist`. */
function round(dist: URL): Promise<DurableFigures> {
  const args = [...process.execArgv, fileURLToPath(import.meta.url), '--child', dist.href, String(MESSAGES), String(CONNECTIONS)];
  if (WORKERS !== undefined) args.push('--workers', WORKERS);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`durable round exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').pop()!) as DurableFigures);
    });
  });
}

const fmt = (r: Figures): string =>
  `${r.perSecond.toFixed(0).padStart(6)} msg/s  p50 ${r.p50.toFixed(1).padStart(5)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms`;
const ms = (v: number | undefined): string => (v === undefined ? '?' : v.toFixed(2));
const fmtDurable = (r: DurableFigures): string =>
  `${fmt(r)}  CPU ${r.cpuUs.toFixed(0).padStart(4)} µs/msg (listener thread ${r.mainCpuUs.toFixed(0)})  ` +
  `${(MESSAGES / r.commits).toFixed(1)} msg/commit (${spread(r.commitSizes)})  loop busy ${(r.busy * 100).toFixed(0)} %\n` +
  `    a commit's cycle, medians: turn ${ms(r.cycle?.turn)} + read ${ms(r.cycle?.read)} + parse ${ms(r.cycle?.parse)} + wait ${ms(r.cycle?.wait)} + commit ${ms(r.cycle?.commit)} ms`;

/**
 * How full the commits were: of all `connections` senders' messages, of at least half, of fewer.
 * A bucket holding one size is named by it ("of 1", not "of 1–1"); an empty range is left out.
 */
function spread(sizes: number[] | undefined): string {
  if (sizes === undefined) return 'sizes not counted';
  const n = sizes.length;
  const half = Math.ceil(n / 2);
  // Sizes from `lo` to `hi` messages, both included (sizes[k] counts the commits of k + 1).
  const buckets: Array<[number, number]> = [
    [n, n],
    [half, n - 1],
    [1, half - 1],
  ];
  return buckets
    .filter(([lo, hi]) => lo <= hi)
    .map(([lo, hi]) => `${sizes.slice(lo - 1, hi).reduce((a, b) => a + b, 0)} of ${lo === hi ? lo : `${lo}–${hi}`}`)
    .join(', ');
}

function summary(label: string, runs: DurableFigures[]): void {
  const rate = median(runs.map((r) => r.perSecond));
  const p99 = median(runs.map((r) => r.p99));
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `${label} median of ${runs.length}: ${rate.toFixed(0)} durable msg/s (target ≥ ${TARGET.perSecond}: ${verdict(rate >= TARGET.perSecond)}), ` +
      `p99 to the 250 ${p99.toFixed(1)} ms (target ≤ ${TARGET.p99Ms}: ${verdict(p99 <= TARGET.p99Ms)}), p50 ${median(runs.map((r) => r.p50)).toFixed(1)} ms, ` +
      `CPU ${median(runs.map((r) => r.cpuUs)).toFixed(0)} µs/msg (listener thread ${median(runs.map((r) => r.mainCpuUs)).toFixed(0)})`,
  );
}

async function main(): Promise<void> {
  const vsCli = option('vs-cli') ?? process.env.MAILGATE_BENCH_CLI;
  // dist/cli/mailgate.js (the bundle) or dist/src/cli/main.js → dist/
  const vs = vsCli === undefined ? undefined : new URL(vsCli.endsWith('/src/cli/main.js') ? '../../' : '../', pathToFileURL(vsCli));
  console.log(
    `${MESSAGES} messages of ~5 KB over ${CONNECTIONS} SMTP connections, ${ROUNDS} durable rounds${vs ? ` each, A/B with ${vs.pathname}` : ''}` +
      (WORKERS === undefined ? '' : `, ${WORKERS} parse workers`),
  );
  console.log(`smtp-server, nothing stored: ${fmt(await baseline())}`);
  const own: DurableFigures[] = [];
  const other: DurableFigures[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    own.push(await round(OWN_DIST));
    console.log(`mailgate smtp, durable 250:  ${fmtDurable(own.at(-1)!)}`);
    if (vs === undefined) continue;
    other.push(await round(vs));
    console.log(`  other build, durable 250:  ${fmtDurable(other.at(-1)!)}`);
  }
  summary('mailgate smtp', own);
  if (vs !== undefined) summary('other build  ', other);
  const probe = mkdtempSync(join(tmpdir(), 'mailgate-bench-fsync-'));
  console.log(`disk fdatasync of 4 KiB p50 ${fsyncMedianMs(probe).toFixed(2)} ms`);
  rmSync(probe, { recursive: true, force: true });
}

const child = option('child');
const run =
  child === undefined
    ? main()
    : durableRun(new URL(child), {
        messages: MESSAGES,
        connections: CONNECTIONS,
        ...(WORKERS === undefined ? {} : { workers: Number(WORKERS) }),
      }).then((f) => console.log(JSON.stringify(f)));
run.catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
