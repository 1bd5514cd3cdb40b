/**
 * `npm run bench:import`: end-to-end messages/s of `mailgate import` of a generated
 * 10,000-message mbox into the emulator (a separate process, as the API would be), on SQLite
 * and on PostgreSQL (fsync on), beside the parse-only rate of `mailgate preview` over the same
 * mbox (same worker pool, same cores). Then peak RSS of the import for 10k vs 20k messages.
 * Median of MAILGATE_BENCH_ROUNDS runs (default 3). Rates are wall-clock, process start included.
 * Beside each rate, the CPU seconds of mailgate, of the PostgreSQL server and of the emulator
 * during it: they share this machine's cores, which bounds the rate from below. Under each
 * store, one more import under `--cpu-prof` splits mailgate's CPU per message into pipeline
 * stages (support/stages.ts) beside the parse-only CPU per message (`mailgate preview`).
 *
 * `--vs-cli PATH` (or MAILGATE_BENCH_VS_CLI): another build's CLI file (`dist/cli/mailgate.js`, or `dist/src/cli/main.js` of a build before the bundle); each round
 * of each store then imports with this build and with that one in turn (A, B, A, B, …), and both
 * medians are printed with their ratio. MAILGATE_BENCH_VS_ENV='K=V K=V': environment variables of that
 * build's runs only (over this process's), e.g. the same build with a setting changed. `--rates-only` leaves out the profiles and the 20k run.
 * `--stores sqlite|postgres` (default both): measure one store only.
 * `--timeline`: instead of all that, MAILGATE_BENCH_ROUNDS imports on SQLite (each build in turn)
 * watched from outside (support/import-timeline.ts): the phases of the run — start-up, reading,
 * tail, exit — with their wall time and share of the CPU bound, the steady window's beside the
 * whole run's, medians; and in the reading window, per kind of thread, the time it ran and the
 * time it waited, runnable, for a core, the main thread's time asleep, and the cores' idle time.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prng } from '../src/prng.js';
import { createTestDatabase, startPostgres } from '../test/support/postgres.js';
import { cpuOf, cpuOfTree, reapedChildrenCpu } from './support/cpu.js';
import { startEmulatorProcess } from './support/emulator-process.js';
import { deliveryRequests, phasesOf, sampleProcess, THREAD_KINDS, type Phases } from './support/import-timeline.js';
import { printStages, stagesOf } from './support/stages.js';

/** MAILGATE_BENCH_CLI: another build's CLI file (`dist/cli/mailgate.js`, or `dist/src/cli/main.js` of a build before the bundle) to measure with this harness (A/B). */
const CLI = process.env['MAILGATE_BENCH_CLI'] ?? fileURLToPath(new URL('../cli/mailgate.js', import.meta.url));
const ROUNDS = Number(process.env.MAILGATE_BENCH_ROUNDS ?? '3');
const VS_CLI = option('vs-cli') ?? process.env['MAILGATE_BENCH_VS_CLI'];
/** MAILGATE_BENCH_VS_ENV='K=V K=V': environment variables for the other build's runs only (e.g. the same build with a setting changed). */
const VS_ENV = Object.fromEntries(
  (process.env['MAILGATE_BENCH_VS_ENV'] ?? '')
    .split(' ')
    .filter((kv) => kv.includes('='))
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const RATES_ONLY = process.argv.includes('--rates-only');
const TIMELINE = process.argv.includes('--timeline');
const STORES = (option('stores') ?? 'sqlite,postgres').split(',');
if (STORES.some((s) => s !== 'sqlite' && s !== 'postgres'))
  throw new Error(`--stores takes sqlite, postgres or both, not ${STORES.join(',')}`);

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}
const TOKEN = 'bench-token-0123456789';
const WORDS =
  'order invoice refund delivery account password shipping please thanks urgent issue help broken missing late customer support ticket reply payment card'.split(
    ' ',
  );

function sentence(rand: () => number, n: number): string {
  return Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]!).join(' ');
}

async function writeMbox(path: string, count: number): Promise<void> {
  const rand = prng(20261122);
  const out = createWriteStream(path);
  for (let i = 0; i < count; i++) {
    const paras = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => sentence(rand, 15 + Math.floor(rand() * 60)));
    const chunk =
      `From sender${i % 97}@example.com Tue May 14 09:30:00 2024\n` +
      `From: Sender ${i % 97} <sender${i % 97}@example.com>\nTo: support@example.org\nSubject: ${sentence(rand, 5)} ${i}\n` +
      `Date: Tue, 14 May 2024 09:${String(i % 60).padStart(2, '0')}:00 +0200\nMessage-ID: <bench-${i}@example.com>\n` +
      (i % 3 === 0 ? `In-Reply-To: <bench-${i - 3}@example.com>\nReferences: <bench-${i - 3}@example.com>\n` : '') +
      `MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary="b${i}"\n\n` +
      `--b${i}\nContent-Type: text/plain; charset=utf-8\n\n${paras.join('\n\n')}\n\n> quoted earlier text\n> ${sentence(rand, 12)}\n` +
      `--b${i}\nContent-Type: text/html; charset=utf-8\n\n<html><body>${paras.map((p) => `<p>${p}</p>`).join('')}</body></html>\n--b${i}--\n\n`;
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

function readHwm(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

interface Run {
  seconds: number;
  cpu: number;
  peak: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `node [nodeArgs] mailgate [args]`: wall seconds, CPU seconds and peak RSS of the whole process.
 * `watch`: called with the child's pid and its start (monotonic ns) as soon as it is spawned.
 */
function run(
  args: string[],
  cwd: string,
  nodeArgs: string[] = [],
  cli = CLI,
  watch?: (pid: number, t0: bigint) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Run> {
  const t0 = process.hrtime.bigint();
  const cpu0 = reapedChildrenCpu();
  const child = spawn(process.execPath, [...nodeArgs, cli, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  watch?.(child.pid!, t0);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout.length < 4096 ? (stdout += d.toString()) : undefined));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, readHwm(child.pid!))), 50);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearInterval(timer);
      resolve({ seconds: Number(process.hrtime.bigint() - t0) / 1e9, cpu: reapedChildrenCpu() - cpu0, peak, code, stdout, stderr });
    }),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

interface Rate {
  rate: number;
  peak: number;
  cpu: { mailgate: number; server: number; emulator: number };
}

/**
 * `serverPid`: the store's server process (its CPU is accounted beside mailgate's), if any.
 * `profile`: one run only, under `--cpu-prof` with the profiles written to that directory.
 * `clis`: the builds to import with, in turn within each round; one Rate each, in that order.
 */
async function importRates(
  dir: string,
  mbox: string,
  count: number,
  store: () => Promise<string>,
  serverPid?: number,
  profile?: string,
  clis: string[] = [CLI],
): Promise<Rate[]> {
  const runs = clis.map(() => [] as Array<{ rate: number; peak: number; mailgate: number; server: number; emulator: number }>);
  for (let r = 0; r < (profile === undefined ? ROUNDS : 1); r++) {
    for (const [c, cli] of clis.entries()) {
      const emu = await startEmulatorProcess(CLI, dir, TOKEN, 'bench/mail');
      try {
        const target = await store();
        const emu0 = cpuOf(emu.pid);
        const server0 = serverPid === undefined ? 0 : cpuOfTree(serverPid);
        const res = await run(
          ['import', '--yes', mbox, '--api-url', emu.url, '--token', TOKEN, '--source', 'bench/mail', '--store', target, '--json'],
          dir,
          profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`],
          cli,
          undefined,
          c === 0 ? process.env : { ...process.env, ...VS_ENV },
        );
        const server = serverPid === undefined ? 0 : cpuOfTree(serverPid) - server0;
        const summary = JSON.parse(res.stdout.trim() || '{}') as { delivered?: number };
        if (res.code !== 0 || summary.delivered !== count)
          throw new Error(`import failed (exit ${res.code}, delivered ${summary.delivered}): ${res.stderr.slice(-2000)}`);
        runs[c]!.push({ rate: count / res.seconds, peak: res.peak, mailgate: res.cpu, server, emulator: cpuOf(emu.pid) - emu0 });
      } finally {
        emu.stop();
      }
    }
  }
  return runs.map((own) => {
    const pick = (k: keyof (typeof own)[number]) => median(own.map((x) => x[k]));
    return {
      rate: pick('rate'),
      peak: pick('peak'),
      cpu: { mailgate: pick('mailgate'), server: pick('server'), emulator: pick('emulator') },
    };
  });
}

async function importRate(...args: Parameters<typeof importRates>): Promise<Rate> {
  return (await importRates(...args))[0]!;
}

const seconds = (n: number) => `${n.toFixed(1)} s`;

/** Two lines for one store's median: the rate beside parse-only, then the CPU bound it is measured against. */
function printRate(name: string, r: Rate, parseRate: number, withServer: boolean, count = 10_000): void {
  const cores = availableParallelism();
  console.log(
    `  ${name.padEnd(48)} ${r.rate.toFixed(0).padStart(7)} msg/s  ${((100 * r.rate) / parseRate).toFixed(0)}% of parse-only  peak RSS ${mb(r.peak)}` +
      `  mailgate CPU ${((r.cpu.mailgate * 1e6) / count).toFixed(0)} µs/msg`,
  );
  const total = r.cpu.mailgate + r.cpu.server + r.cpu.emulator;
  console.log(
    `  ${''.padEnd(48)} CPU: mailgate ${seconds(r.cpu.mailgate)}${withServer ? `, PostgreSQL server ${seconds(r.cpu.server)}` : ''}, emulator ${seconds(r.cpu.emulator)}` +
      ` = ${seconds(total)} on ${cores} cores (no faster than ${seconds(total / cores)}, ${(count / (total / cores)).toFixed(0)} msg/s;` +
      ` measured ${((100 * r.rate * total) / cores / count).toFixed(0)}% of that bound, target >= 90%)`,
  );
}

/** `--timeline`: the phases of ROUNDS imports on SQLite per build (interleaved), medians. */
async function timeline(dir: string, mbox: string, clis: string[]): Promise<void> {
  const cores = availableParallelism();
  const runs = clis.map(() => [] as Phases[]);
  // The sampling's own CPU (this process, on the same cores), over the runs' wall time.
  const own0 = process.cpuUsage();
  let wall = 0;
  const real = realpathSync(mbox);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [c, cli] of clis.entries()) {
      const emu = await startEmulatorProcess(CLI, dir, TOKEN, 'bench/mail', ['--log', '--log-format', 'json']);
      try {
        const emuCpu0 = cpuOf(emu.pid);
        let sampler: ReturnType<typeof sampleProcess> | undefined;
        let epochAtT0 = 0;
        const store = `sqlite:${join(dir, `tl-${r}-${c}`, 'm.db')}`;
        const res = await run(
          ['import', '--yes', mbox, '--api-url', emu.url, '--token', TOKEN, '--source', 'bench/mail', '--store', store, '--json'],
          dir,
          [],
          cli,
          (pid, t0) => {
            epochAtT0 = Date.now() - Number(process.hrtime.bigint() - t0) / 1e6;
            sampler = sampleProcess(pid, emu.pid, real, t0);
          },
          c === 0 ? process.env : { ...process.env, ...VS_ENV },
        );
        const samples = sampler!.stop();
        if (res.code !== 0) throw new Error(`import failed (exit ${res.code}): ${res.stderr.slice(-2000)}`);
        // The emulator's last answer is logged after it was sent: give its log a moment.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const posts = deliveryRequests(emu.output(), epochAtT0);
        const emuCpu = cpuOf(emu.pid) - emuCpu0;
        // The samples' emulator CPU is absolute: make it relative to the run like mailgate's.
        for (const s of samples) s.emulator -= emuCpu0;
        wall += res.seconds;
        runs[c]!.push(phasesOf(samples, posts, res.seconds * 1000, res.cpu, emuCpu, cores));
      } finally {
        emu.stop();
      }
    }
  }
  const med = (xs: number[]) => median(xs);
  const own = process.cpuUsage(own0);
  const sampling = (own.user + own.system) / 1e6 / wall;
  console.log(
    `  timeline of an import of 10k messages on SQLite, ${ROUNDS} round(s), medians (ms since the process started; share = CPU of mailgate + emulator over ${cores} cores × wall; the sampling itself took ${(sampling * 100).toFixed(0)} % of a core):`,
  );
  const names = runs[0]![0]!.rows.map((x) => x.name);
  const labels = clis.length === 1 ? ['this build'] : ['this build', 'other build'];
  for (const [c, own] of runs.entries()) {
    console.log(
      `    ${labels[c]}: first byte read ${med(own.map((p) => p.firstRead)).toFixed(0)}, first delivery request ${med(own.map((p) => p.firstPost)).toFixed(0)},` +
        ` last byte read ${med(own.map((p) => p.lastRead)).toFixed(0)}, last delivery answered ${med(own.map((p) => p.lastAnswer)).toFixed(0)}, exit ${med(own.map((p) => p.exit)).toFixed(0)} ms`,
    );
    for (const [i, name] of names.entries()) {
      const rows = own.map((p) => p.rows[i]!);
      const wall = med(rows.map((x) => x.to - x.from));
      console.log(
        `      ${name.padEnd(48)} ${wall.toFixed(0).padStart(6)} ms  CPU ${med(rows.map((x) => x.cpu * 1000))
          .toFixed(0)
          .padStart(5)} ms` +
          `  main thread ${med(rows.map((x) => x.mainCpu * 1000))
            .toFixed(0)
            .padStart(5)} ms  share ${med(rows.map((x) => x.share * 100))
            .toFixed(0)
            .padStart(3)} %` +
          `  (each run: ${rows.map((x) => (x.share * 100).toFixed(0)).join(' ')})`,
      );
    }
    // Where each kind of thread's time went in the reading window: running, runnable but
    // waiting for a core, and (the main thread) asleep; and the cores' idle time meanwhile.
    const reading = own.map((p) => p.rows[1]!);
    const ms = (f: (x: (typeof reading)[number]) => number) => med(reading.map(f)).toFixed(0);
    const kinds = THREAD_KINDS.map((k) => `${k} ${ms((x) => x.sched[k].run * 1000)}/${ms((x) => x.sched[k].wait * 1000)}`);
    console.log(
      `      reading window, ms ran/waited for a core: ${kinds.join(', ')}; main thread asleep ` +
        `${ms((x) => x.to - x.from - (x.sched.main.run + x.sched.main.wait) * 1000)}; cores idle ${ms((x) => x.idle * 1000)}`,
    );
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-import-'));
  if (TIMELINE) {
    try {
      const m10 = join(dir, '10k.mbox');
      await writeMbox(m10, 10_000);
      console.log(
        `node ${process.version}, load ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}`,
      );
      await timeline(dir, m10, VS_CLI === undefined ? [CLI] : [CLI, VS_CLI]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  const server = await startPostgres({ durable: true });
  process.env.MAILGATE_TEST_POSTGRES_URL = server.url;
  try {
    const m10 = join(dir, '10k.mbox');
    const m20 = join(dir, '20k.mbox');
    await writeMbox(m10, 10_000);
    if (!RATES_ONLY) await writeMbox(m20, 20_000);
    console.log(`node ${process.version}, ${ROUNDS} round(s), median; mbox 10k = ${mb(readFileSync(m10).length)}`);
    const parse: number[] = [];
    const parseCpu: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const res = await run(['preview', '--format', 'jsonl', m10], dir);
      if (res.code !== 0) throw new Error(`preview failed: ${res.stderr}`);
      parse.push(10_000 / res.seconds);
      parseCpu.push(res.cpu);
    }
    const parseRate = median(parse);
    let n = 0;
    const sqliteStore = async () => `sqlite:${join(dir, `db-${(n += 1)}`, 'm.db')}`;
    const pgStore = () => createTestDatabase('mailgate_bench_import');
    const clis = VS_CLI === undefined ? [CLI] : [CLI, VS_CLI];
    const none: Rate[] = [];
    const [sqlite, sqliteVs] = STORES.includes('sqlite')
      ? await importRates(dir, m10, 10_000, sqliteStore, undefined, undefined, clis)
      : none;
    const [postgres, postgresVs] = STORES.includes('postgres')
      ? await importRates(dir, m10, 10_000, pgStore, server.pid(), undefined, clis)
      : none;
    console.log(
      `  ${'parse only (mailgate preview --format jsonl)'.padEnd(48)} ${parseRate.toFixed(0).padStart(7)} msg/s  CPU: mailgate ${seconds(median(parseCpu))}`,
    );
    if (sqlite !== undefined) printRate('import, SQLite (synchronous=FULL)', sqlite, parseRate, false);
    if (sqliteVs !== undefined) printRate('  other build (interleaved), SQLite', sqliteVs, parseRate, false);
    if (postgres !== undefined) printRate('import, PostgreSQL (fsync on)', postgres, parseRate, true);
    if (postgresVs !== undefined) printRate('  other build (interleaved), PostgreSQL', postgresVs, parseRate, true);
    for (const [name, a, b] of [
      ['SQLite', sqlite, sqliteVs],
      ['PostgreSQL', postgres, postgresVs],
    ] as const) {
      if (a === undefined || b === undefined) continue;
      console.log(
        `  ${name}: this build / other build: rate ${(a.rate / b.rate).toFixed(3)}, mailgate CPU per message ${(a.cpu.mailgate / b.cpu.mailgate).toFixed(3)}, peak RSS ${(a.peak / b.peak).toFixed(3)}`,
      );
    }
    if (RATES_ONLY) return;
    const parseUs = (median(parseCpu) * 1e6) / 10_000;
    for (const [name, store, pid] of [
      ['SQLite', async () => `sqlite:${join(dir, `db-${(n += 1)}`, 'm.db')}`, undefined],
      ['PostgreSQL', () => createTestDatabase('mailgate_bench_import'), server.pid()],
    ] as const) {
      if (!STORES.includes(name.toLowerCase())) continue;
      const prof = join(dir, `prof-${name}`);
      const r = await importRate(dir, m10, 10_000, store, pid, prof);
      console.log(
        `  where mailgate's CPU goes, import on ${name} (one run under --cpu-prof, process start included, ${r.rate.toFixed(0)} msg/s):`,
      );
      printStages('    ', stagesOf(prof), 10_000, r.cpu.mailgate, parseUs, 'parse only (mailgate preview, process start included)');
    }
    if (sqlite === undefined) return;
    const big = await importRate(dir, m20, 20_000, async () => `sqlite:${join(dir, `db-${(n += 1)}`, 'm.db')}`);
    console.log(
      `  peak RSS of import on SQLite: 10k messages ${mb(sqlite.peak)}, 20k messages ${mb(big.peak)} (${big.rate.toFixed(0)} msg/s)`,
    );
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
