/**
 * IMAP benchmark (`npm run bench:imap`): fills a Dovecot mailbox and prints, for an
 * attachment-heavy, a mixed (30 % with an attachment) and a text-only mailbox, mailgate's
 * end-to-end sync (IMAP → parse → store → emulator acknowledged) messages/s beside two
 * references: the raw imapflow full-source fetch (moves bytes, nothing else) and the pipeline a
 * user would build by hand (support/handbuilt.ts: imapflow → mailparser → sync-raw-emails in
 * batches of 128, no durability), and the peak RSS of the `mailgate serve` process.
 *
 *   node dist/bench/imap.js [--attachment-messages 1000] [--attachment-kb 750] [--mixed-messages 5000]
 *     [--mixed-attachment-kb 100] [--text-messages 5000] [--runs 3] [--mailboxes attachments,mixed,text,new-mail]
 *     [--appends 50] [--append-pause-ms 2500] [--cpu-prof-dir DIR] [--workers N] [--vs-cli PATH] [--vs-workers N] [--no-stages] [--no-references]
 *     [--timeline MS] [--phases]
 *
 * Runs alternate (raw fetch, hand-built, mailgate, raw fetch, …) so that a drifting machine
 * load hits all three alike; the figures are medians. After them, one more `mailgate serve`
 * run under `--cpu-prof` splits mailgate's CPU per message into pipeline stages
 * (support/stages.ts), beside the parse-only CPU per message: `previewSync` + encoding, the
 * work of a parse worker, over the same (full) sources on one thread.
 *
 * mailgate runs as `mailgate serve --config …` in a child process (its peak RSS is the
 * kernel's VmHWM of that process, parse workers included); the emulator runs in this
 * process. The end-to-end time runs from the moment the service listens (process start-up
 * excluded; IMAP login included) until the emulator holds every comment.
 * Dovecot's index is built and the page cache warmed by one unmeasured fetch first.
 * Under each mailbox: the CPU seconds mailgate, Dovecot and the emulator spent during the
 * sync, and the fastest rate those allow on this machine's cores even with perfect overlap;
 * beside it the main thread's own CPU per message (one event loop runs the IMAP client, intake,
 * the store and delivery: that share cannot spread over cores, so it bounds the rate alone) and
 * when the first comment arrived (the pipeline's fill time), and the steps before it from the
 * service's own log: the mailbox lease taken, IMAP connected, the first batch delivered.
 * Last, new mail on an idle mailbox (support/new-mail.ts): APPEND → API latency over `--appends`
 * messages one at a time, beside a bare imapflow IDLE client's EXISTS latency (the floor).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ImapFlow } from 'imapflow';
import { createEmulator } from '../src/emulator/index.js';
import { encodePreview } from '../src/pipeline/encoded.js';
import { previewSync } from '../src/preview/index.js';
import { cpuByThread, cpuOf, cpuOfTree } from './support/cpu.js';
import { startBenchDovecot, type BenchDovecot } from './support/dovecot.js';
import { attachmentMessage, mixedMessage, textMessage } from './support/imap-messages.js';
import { benchNewMail } from './support/new-mail.js';
import { sampleServe, servePhases, type ServePhase, type StateSample } from './support/serve-phases.js';
import { monotonicUs, printStages, printTimeline, stagesOf, timelineOf } from './support/stages.js';

const CLI = fileURLToPath(new URL('../cli/mailgate.js', import.meta.url));
const THREAD_STATES = fileURLToPath(new URL('./support/thread-states.js', import.meta.url));
const HANDBUILT = fileURLToPath(new URL('./support/handbuilt.js', import.meta.url));

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
  return v;
}

/**
 * `--cpu-prof-dir DIR`: keep the profiled run's CPU profiles in DIR/<mailbox> (otherwise they are
 * deleted), with window.json: the sync's window on the profiles' clock (µs) and its first comment.
 */
function profileDir(): string | undefined {
  const i = process.argv.indexOf('--cpu-prof-dir');
  return i < 0 ? undefined : process.argv[i + 1];
}

/**
 * `--vs-cli PATH`: another build's CLI file (`dist/cli/mailgate.js`, or `dist/src/cli/main.js` of a build before the bundle), run after each mailgate run (A/B in
 * the same sitting, interleaved); `--no-stages` skips the profiled run. MAILGATE_BENCH_VS_ENV='K=V K=V':
 * environment variables of the `--vs-cli` runs only (over this process's), e.g. the same build
 * with a setting changed.
 */
function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

/**
 * `--timeline MS`: after the stage table, the profiled run's threads over time, MS ms a line (where
 * each thread was busy, by stage, and idle: the waits). Needs the profiled run (not --no-stages).
 */
function timelineMs(): number | undefined {
  return option('timeline') === undefined ? undefined : arg('timeline', 50);
}

/** `--mailboxes a,b`: which of attachments, mixed, text, new-mail to run (default all). */
function mailboxes(): Set<string> {
  const i = process.argv.indexOf('--mailboxes');
  return new Set(i < 0 ? ['attachments', 'mixed', 'text', 'new-mail'] : (process.argv[i + 1] ?? '').split(','));
}

async function connectClient(d: BenchDovecot, user: string): Promise<ImapFlow> {
  for (let attempt = 0; ; attempt++) {
    const c = new ImapFlow({ host: d.host, port: d.port, secure: false, auth: { user, pass: `pw-${user}` }, logger: false });
    c.on('error', () => undefined);
    try {
      await c.connect();
      return c;
    } catch (err) {
      if (attempt > 40) throw err;
      await new Promise((r) => setTimeout(r, 100)); // the passwd-file is re-read at most once a second
    }
  }
}

/** Full-source fetch of the whole INBOX; returns messages/s. */
async function rawFetch(d: BenchDovecot, user: string, what: { source?: boolean; bodyStructure?: boolean }): Promise<number> {
  const c = await connectClient(d, user);
  try {
    await c.mailboxOpen('INBOX', { readOnly: true });
    const t0 = performance.now();
    let n = 0;
    for await (const m of c.fetch('1:*', { uid: true, ...what })) if (m.uid) n++;
    return n / ((performance.now() - t0) / 1000);
  } finally {
    await c.logout().catch(() => c.close());
  }
}

/** CPU seconds of this process (where the emulator runs). */
const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

interface SyncRun {
  rate: number;
  rssMb: number;
  /** CPU seconds during the sync: the pipeline's process (workers included), Dovecot, and this process (the emulator). */
  cpu: { mailgate: number; dovecot: number; emulator: number };
  /** CPU seconds of the pipeline's main thread alone (its event loop: the part that cannot spread over cores). */
  mainCpu: number;
  /** ms from ready until the first comment reached the emulator, and the whole sync. */
  firstMs: number;
  /** ms from the moment the emulator held 90 % of the comments until it held them all (the sync's tail). */
  tailMs: number;
  /**
   * CPU seconds from ready until the first comment (the pipeline's fill): the main thread, the
   * rest of the process (parse workers, V8's and libuv's threads) and Dovecot. Unlike the fill
   * time, these hardly move with the machine's load.
   */
  fill: { main: number; rest: number; dovecot: number };
  /** ms from the service's "serving on" log line to its first lease, IMAP login and delivered batch (NaN: not logged). */
  steps: { lease: number; connected: number; delivered: number };
  wallMs: number;
  /** Requests the emulator answered during the run (delivery's batches: fewer, larger ones cost less CPU). */
  requests: number;
  /** The sync's window on the monotonic clock, µs (to cut CPU profiles to it). */
  window: { from: number; to: number };
  /** `--phases`: the sync's phases, sampled from outside (support/serve-phases.ts). */
  phases?: ServePhase[];
}

/** `--phases`: sample every mailgate run from outside and print its phases (start-up, filling, syncing, tail). */
const PHASES = process.argv.includes('--phases');

/** A pipeline under test: the process to start and the line it prints once it is ready. */
interface Pipeline {
  args: (url: string, token: string, dir: string) => string[];
  ready: string;
  /** Environment variables of its own, over this process's. */
  env?: NodeJS.ProcessEnv;
}

/** MAILGATE_BENCH_VS_ENV='K=V K=V': environment variables for the other build's runs only (e.g. the same build with a setting changed). */
const VS_ENV = Object.fromEntries(
  (process.env['MAILGATE_BENCH_VS_ENV'] ?? '')
    .split(' ')
    .filter((kv) => kv.includes('='))
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);

/**
 * ms from the service's "serving on" log line to the first line matching each pattern, by the
 * lines' own times (NaN when one is missing).
 */
function logSteps(output: string): SyncRun['steps'] {
  const lines = output.split('\n').flatMap((l) => {
    try {
      const j = JSON.parse(l) as { time?: string; msg?: string };
      return j.time !== undefined && j.msg !== undefined ? [{ at: Date.parse(j.time), msg: j.msg }] : [];
    } catch {
      return [];
    }
  });
  const at = (re: RegExp) => lines.find((l) => re.test(l.msg))?.at ?? NaN;
  const serving = at(/serving on/);
  return {
    lease: at(/^took lease/) - serving,
    connected: at(/^connected to/) - serving,
    delivered: at(/^delivered \d+ comment/) - serving,
  };
}

/**
 * `--workers N`: parse workers of every mailgate run (default: the service's own default);
 * `--vs-workers N`: of the `--vs-cli` runs only (the same build with 1 and 2 workers: `--vs-cli`
 * naming this build's own main.js).
 */
function workersLine(vs: boolean): string[] {
  const name = vs && option('vs-workers') !== undefined ? 'vs-workers' : 'workers';
  return option(name) === undefined ? [] : [`parsing: { workers: ${arg(name, 1)} }`];
}

/** `mailgate serve` with one IMAP account on the mailbox, into a fresh SQLite store (info log: the bench reads its steps). */
function mailgate(d: BenchDovecot, user: string, cli = CLI, vs = false): Pipeline {
  return {
    ready: 'serving on',
    ...(vs ? { env: { ...process.env, ...VS_ENV } } : {}),
    args: (url, token, dir) => {
      writeFileSync(
        join(dir, 'mailgate.yaml'),
        [
          `store: sqlite:${join(dir, 'mailgate.db')}`,
          `api: { url: ${url}, token: "${token}" }`,
          'server: { listen: 127.0.0.1:0 }',
          'log_level: info',
          ...workersLine(vs),
          'routes: [{ name: bench, source: bench/inbox }]',
          `adapters: { imap: [{ name: bench, route: bench, host: ${d.host}, port: ${d.port}, secure: false, auth: { user: ${user}, pass: pw-${user} }, folders: [INBOX], batch_size: 500 }] }`,
          '',
        ].join('\n'),
      );
      return [cli, 'serve', '--config', join(dir, 'mailgate.yaml')];
    },
  };
}

/** The hand-built reference pipeline (support/handbuilt.ts). */
function handBuilt(d: BenchDovecot, user: string): Pipeline {
  return { ready: 'ready', args: (url, token) => [HANDBUILT, d.host, String(d.port), user, `pw-${user}`, url, token, 'bench/inbox'] };
}

/**
 * One run of a pipeline into a fresh emulator; returns messages/s, peak RSS in MB and CPU
 * seconds, from the moment the process is ready until the emulator holds every comment.
 * `profile`: a directory for the process's CPU profiles (`--cpu-prof`).
 */
async function syncRun(d: BenchDovecot, pipeline: Pipeline, count: number, profile?: string): Promise<SyncRun> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-imap-'));
  const token = randomBytes(8).toString('hex');
  const emulator = createEmulator({ token, autoCreateSources: true, logger: false });
  const url = await emulator.listen(0, '127.0.0.1');
  const child = spawn(
    process.execPath,
    [...(profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`]), ...pipeline.args(url, token, dir)],
    { cwd: dir, env: pipeline.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  let t0 = 0;
  let from = 0;
  let cpu0 = { mailgate: 0, dovecot: 0, emulator: 0 };
  let main0 = 0;
  let firstMs = 0;
  let fill = { main: NaN, rest: NaN, dovecot: NaN };
  let ninetyAt = 0;
  let sampler: ReturnType<typeof sampleServe> | undefined;
  let states: ReturnType<typeof spawn> | undefined;
  let statesOut = '';
  const mainCpu = () => cpuByThread(child.pid!).get(child.pid!) ?? 0;
  const onData = (b: Buffer) => {
    output += b.toString();
    if (t0 === 0 && output.includes(pipeline.ready)) {
      t0 = performance.now();
      from = monotonicUs();
      cpu0 = { mailgate: cpuOf(child.pid!), dovecot: cpuOfTree(d.pid), emulator: ownCpu() };
      main0 = mainCpu();
      if (PHASES) sampler = sampleServe(child.pid!, d.pid, () => emulator.stats().comments);
    }
  };
  if (PHASES) {
    // Thread states from a process of its own (in this one, the emulator would always show as
    // running), started with the service: it is sampling by the time the service listens.
    const targets = [`mailgate=${child.pid}`, `mailgate/main=${child.pid}`, `dovecot=${d.pid}`, `emulator=${process.pid}`];
    states = spawn(process.execPath, [THREAD_STATES, '2', ...targets], { stdio: ['pipe', 'pipe', 'inherit'] });
    states.stdout!.on('data', (b: Buffer) => (statesOut += b.toString()));
  }
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  let rssMb = 0;
  try {
    while (t0 === 0 || emulator.stats().comments < count) {
      if (child.exitCode !== null && (child.exitCode !== 0 || emulator.stats().comments < count))
        throw new Error(`${pipeline.args(url, token, dir)[0]} exited with ${child.exitCode}: ${output}`);
      if (child.exitCode === null) rssMb = Math.max(rssMb, peakRssMb(child.pid!));
      if (t0 !== 0 && firstMs === 0 && emulator.stats().comments > 0) {
        firstMs = performance.now() - t0;
        const main = mainCpu() - main0;
        fill = { main, rest: cpuOf(child.pid!) - cpu0.mailgate - main, dovecot: cpuOfTree(d.pid) - cpu0.dovecot };
      }
      if (t0 !== 0 && ninetyAt === 0 && emulator.stats().comments >= 0.9 * count) ninetyAt = performance.now();
      await new Promise((r) => setTimeout(r, 20));
    }
    const wallMs = performance.now() - t0;
    const rate = count / (wallMs / 1000);
    const to = monotonicUs();
    const sampled = sampler?.stop();
    let stateSamples: StateSample[] | undefined;
    if (states !== undefined) {
      const ended = new Promise((r) => states!.once('exit', r));
      states.stdin!.end();
      await ended;
      stateSamples = statesOut
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as StateSample);
    }
    const main = child.exitCode === null ? mainCpu() - main0 : NaN;
    const cpu = {
      mailgate: cpuOf(child.pid!) - cpu0.mailgate,
      dovecot: cpuOfTree(d.pid) - cpu0.dovecot,
      // The sampler runs in this process, beside the emulator: its own CPU is not the emulator's.
      emulator: ownCpu() - cpu0.emulator - (sampled?.ownCpu ?? 0),
    };
    if (child.exitCode === null) rssMb = Math.max(rssMb, peakRssMb(child.pid!));
    const requests = Object.values(emulator.stats().requests).reduce(
      (n, byStatus) => n + Object.values(byStatus).reduce((a, b) => a + b, 0),
      0,
    );
    // 0: 90 % and the rest arrived within one poll (20 ms).
    const tailMs = ninetyAt === 0 ? 0 : t0 + wallMs - ninetyAt;
    const phases =
      sampled === undefined
        ? undefined
        : servePhases(
            sampled.samples,
            count,
            availableParallelism(),
            stateSamples === undefined ? undefined : { samples: stateSamples, origin: sampler!.origin },
          );
    return {
      rate,
      rssMb,
      cpu,
      mainCpu: main,
      firstMs,
      fill,
      tailMs,
      wallMs,
      requests,
      window: { from, to },
      steps: logSteps(output),
      ...(phases === undefined ? {} : { phases }),
    };
  } finally {
    if (states !== undefined && states.exitCode === null) states.kill();
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * CPU µs per message of mailgate's parse alone (what a parse worker runs: previewSync and the
 * encoding of its answer) over the first `n` messages, on this thread, after a warm-up: the
 * median of three passes (a shared machine's load moves a single pass a lot).
 */
function parseOnlyUs(make: (i: number) => Buffer, n: number): number {
  const raws = Array.from({ length: n }, (_, i) => make(i));
  for (const raw of raws.slice(0, 200)) encodePreview(previewSync(raw));
  const passes: number[] = [];
  for (let pass = 0; pass < 3; pass++) {
    const c0 = process.cpuUsage();
    for (const raw of raws) encodePreview(previewSync(raw));
    const c = process.cpuUsage(c0);
    passes.push((c.user + c.system) / n);
  }
  return median(passes);
}

/** `--phases`: each phase's wall, share of the CPU bound and CPU by process, medians over the runs (and each run's share). */
function printPhases(a: SyncRun[], b: SyncRun[] | undefined): void {
  const ms = (x: number) => x.toFixed(0).padStart(5);
  const pc = (x: number) => `${(x * 100).toFixed(0).padStart(2)} %`;
  const one = (runs: SyncRun[], i: number) => {
    const rows = runs.map((r) => r.phases![i]!);
    const m = (f: (p: ServePhase) => number) => median(rows.map(f));
    const each = rows.map((p) => (p.share * 100).toFixed(0)).join('/');
    return (
      `${ms(m((p) => p.to - p.from))} ms at ${(m((p) => p.share) * 100).toFixed(0).padStart(3)} % (${each}); ` +
      `CPU ms mailgate ${ms(m((p) => p.cpu.mailgate * 1e3))} (main ${ms(m((p) => p.cpu.main * 1e3))}), ` +
      `Dovecot ${ms(m((p) => p.cpu.dovecot * 1e3))}, emulator ${ms(m((p) => p.cpu.emulator * 1e3))}; cores idle ${ms(m((p) => p.idle * 1e3))}` +
      (rows[0]!.states === undefined
        ? ''
        : `; runnable: none ${pc(m((p) => p.states!.none))} disk ${pc(m((p) => p.states!.disk))} one ${pc(m((p) => p.states!.one))}` +
          ` (main alone ${pc(m((p) => p.states!.mainAlone))}) two+ ${pc(m((p) => p.states!.twoPlus))}; main ${pc(m((p) => p.states!.main))}`)
    );
  };
  console.log(`${''.padEnd(34)} phases (sampled from outside every 5 ms; medians, each run's share in brackets):`);
  for (let i = 0; i < a[0]!.phases!.length; i++) {
    console.log(`${''.padEnd(36)}${a[0]!.phases![i]!.name}`);
    console.log(`${''.padEnd(38)}this build ${one(a, i)}`);
    if (b !== undefined) console.log(`${''.padEnd(38)}other      ${one(b, i)}`);
  }
}

interface Mailbox {
  label: string;
  user: string;
  n: number;
  make: (i: number) => Buffer;
}

const pad = (s: string, w: number) => s.padStart(w);

async function benchMailbox(d: BenchDovecot, { label, user, n, make }: Mailbox, runs: number): Promise<void> {
  let bytes = 0;
  d.addUser(user, `pw-${user}`);
  d.fill(
    user,
    (function* () {
      for (let i = 0; i < n; i++) {
        const m = make(i);
        bytes += m.length;
        yield m;
      }
    })(),
  );
  await rawFetch(d, user, { bodyStructure: true, source: true }); // index + page cache, unmeasured
  const raw: number[] = [];
  const hand: SyncRun[] = [];
  // `--no-references`: mailgate only (A/B with --vs-cli); the raw fetch and hand-built figures print as NaN.
  const references = !process.argv.includes('--no-references');
  const syncs: SyncRun[] = [];
  const vs = option('vs-cli');
  const other = vs === undefined ? undefined : resolve(vs);
  const others: SyncRun[] = [];
  for (let r = 0; r < runs; r++) {
    if (references) {
      raw.push(await rawFetch(d, user, { source: true }));
      hand.push(await syncRun(d, handBuilt(d, user), n));
    }
    syncs.push(await syncRun(d, mailgate(d, user), n));
    if (other !== undefined) others.push(await syncRun(d, mailgate(d, user, other, true), n));
  }
  const rss = Math.max(...syncs.map((x) => x.rssMb));
  const rate = median(syncs.map((x) => x.rate));
  const handRate = references ? median(hand.map((x) => x.rate)) : NaN;
  const rawRate = references ? median(raw) : NaN;
  console.log(
    `${label.padEnd(34)} ${pad((bytes / 2 ** 20).toFixed(0) + ' MiB', 9)} ${pad(rawRate.toFixed(0), 10)} ${pad(handRate.toFixed(0), 10)}` +
      ` ${pad(rate.toFixed(0), 10)} ${pad((rate / handRate).toFixed(2) + '×', 9)} ${pad((rate / rawRate).toFixed(2) + '×', 9)} ${pad(rss.toFixed(0) + ' MB', 9)}`,
  );
  console.log(
    `${''.padEnd(34)} each run, msg/s: raw ${raw.map((x) => x.toFixed(0)).join(' ')}; hand-built ${hand.map((x) => x.rate.toFixed(0)).join(' ')};` +
      ` mailgate ${syncs.map((x) => x.rate.toFixed(0)).join(' ')}`,
  );
  const cpu = (k: keyof SyncRun['cpu'], of = syncs) => median(of.map((x) => x.cpu[k]));
  const total = cpu('mailgate') + cpu('dovecot') + cpu('emulator');
  const bound = n / (total / availableParallelism());
  console.log(
    `${''.padEnd(34)} CPU during the sync: mailgate ${cpu('mailgate').toFixed(1)} s, Dovecot ${cpu('dovecot').toFixed(1)} s, emulator ${cpu('emulator').toFixed(1)} s` +
      ` = ${total.toFixed(1)} s on ${availableParallelism()} cores: no faster than ${bound.toFixed(0)} msg/s (${(bound / rawRate).toFixed(2)}× raw fetch);` +
      ` mailgate at ${((rate / bound) * 100).toFixed(0)} % of it (target ≥ 85 %), ${(rate / handRate).toFixed(2)}× hand-built (target ≥ 2×)`,
  );
  console.log(
    `${''.padEnd(34)} CPU per message: mailgate ${((cpu('mailgate') * 1e6) / n).toFixed(0)} µs, hand-built ${references ? ((cpu('mailgate', hand) * 1e6) / n).toFixed(0) : 'NaN'} µs`,
  );
  // The bound above spreads all CPU over the cores; the main thread's share cannot spread (one
  // event loop runs the IMAP client, intake, the store and delivery), so it bounds alone too.
  const mainUs = (median(syncs.map((x) => x.mainCpu)) * 1e6) / n;
  const mainBound = 1e6 / mainUs;
  const busy = median(syncs.map((x) => x.mainCpu / (x.wallMs / 1000)));
  console.log(
    `${''.padEnd(34)} main thread ${mainUs.toFixed(0)} µs/msg (busy ${(busy * 100).toFixed(0)} % of the sync): alone no faster than ${mainBound.toFixed(0)} msg/s;` +
      ` mailgate at ${((rate / Math.min(bound, mainBound)) * 100).toFixed(0)} % of the lower of the two bounds;` +
      ` first comment after ${median(syncs.map((x) => x.firstMs)).toFixed(0)} of ${median(syncs.map((x) => x.wallMs)).toFixed(0)} ms;` +
      ` ${median(syncs.map((x) => x.requests))} API requests`,
  );
  const step = (k: keyof SyncRun['steps'], of = syncs) => median(of.map((x) => x.steps[k])).toFixed(0);
  const steps = (of: SyncRun[]) =>
    `lease ${step('lease', of)}, IMAP connected ${step('connected', of)}, first batch delivered ${step('delivered', of)} ms`;
  console.log(
    `${''.padEnd(34)} after "serving on" (service log): ${steps(syncs)}${other === undefined ? '' : `; ${other}: ${steps(others)}`}`,
  );
  if (other !== undefined) {
    const us = (xs: SyncRun[]) => xs.map((x) => ((x.cpu.mailgate * 1e6) / n).toFixed(0));
    // Each run's share of its own CPU bound: the CPU of every process in it over cores × wall.
    const shares = (xs: SyncRun[]) =>
      xs.map((x) => ((x.cpu.mailgate + x.cpu.dovecot + x.cpu.emulator) / availableParallelism() / (x.wallMs / 1000)) * 100);
    const pct = (xs: SyncRun[]) => {
      const each = shares(xs);
      return `${each.map((x) => x.toFixed(0)).join(' ')} % (median ${median(each).toFixed(0)} %)`;
    };
    console.log(
      `${''.padEnd(34)} A/B: this build ${us(syncs).join(' ')} µs/msg (median ${((cpu('mailgate') * 1e6) / n).toFixed(0)}),` +
        ` ${other} ${us(others).join(' ')} µs/msg (median ${((cpu('mailgate', others) * 1e6) / n).toFixed(0)});` +
        ` msg/s ${median(syncs.map((x) => x.rate)).toFixed(0)} vs ${median(others.map((x) => x.rate)).toFixed(0)}` +
        ` (each run: ${others.map((x) => x.rate.toFixed(0)).join(' ')});` +
        ` first comment after ${median(syncs.map((x) => x.firstMs)).toFixed(0)} vs ${median(others.map((x) => x.firstMs)).toFixed(0)} ms;` +
        ` last 10 % of the comments in ${median(syncs.map((x) => x.tailMs)).toFixed(0)} vs ${median(others.map((x) => x.tailMs)).toFixed(0)} ms;` +
        ` API requests ${median(syncs.map((x) => x.requests))} vs ${median(others.map((x) => x.requests))};` +
        ` peak RSS ${rss.toFixed(0)} vs ${Math.max(...others.map((x) => x.rssMb)).toFixed(0)} MB`,
    );
    console.log(`${''.padEnd(34)} A/B share of each run's own CPU bound: this build ${pct(syncs)}, ${other} ${pct(others)}`);
    // The main thread's own CPU (the event loop: the IMAP client, intake, the store, delivery).
    const mainUsOf = (xs: SyncRun[]) => xs.map((x) => (x.mainCpu * 1e6) / n);
    const list = (xs: number[]) => `${xs.map((x) => x.toFixed(0)).join(' ')} (median ${median(xs).toFixed(0)})`;
    console.log(`${''.padEnd(34)} A/B main thread µs/msg: this build ${list(mainUsOf(syncs))}, ${other} ${list(mainUsOf(others))}`);
    const fillCpu = (xs: SyncRun[]) =>
      (['main', 'rest', 'dovecot'] as const).map((k) => `${k} ${(median(xs.map((x) => x.fill[k])) * 1e3).toFixed(0)}`).join(', ');
    console.log(`${''.padEnd(34)} A/B CPU ms until the first comment (medians): this build ${fillCpu(syncs)}; ${other} ${fillCpu(others)}`);
  }
  if (PHASES) printPhases(syncs, other === undefined ? undefined : others);
  if (process.argv.includes('--no-stages')) return;
  const keep = profileDir();
  const dir = keep === undefined ? mkdtempSync(join(tmpdir(), 'mailgate-bench-imap-prof-')) : join(keep, user);
  mkdirSync(dir, { recursive: true });
  try {
    const prof = await syncRun(d, mailgate(d, user), n, dir);
    // Kept profiles come with the sync's window on their clock (µs), e.g. for a timeline of the threads.
    if (keep !== undefined)
      writeFileSync(join(dir, 'window.json'), JSON.stringify({ ...prof.window, firstMs: prof.firstMs, steps: prof.steps }));
    // The service writes its profiles when it exits (syncRun waited for that).
    console.log(`${''.padEnd(34)} where mailgate's CPU goes (one run under --cpu-prof, ${prof.rate.toFixed(0)} msg/s):`);
    printStages(
      ' '.repeat(36),
      stagesOf(dir, prof.window.from, prof.window.to),
      n,
      prof.cpu.mailgate,
      parseOnlyUs(make, Math.min(n, 500)),
      'parse only (previewSync + encoding, full sources, one thread)',
    );
    const bucketMs = timelineMs();
    if (bucketMs !== undefined) {
      console.log(
        `${''.padEnd(34)} timeline of the profiled run, ${bucketMs} ms a line (ms busy by stage; idle = the line's length less them):`,
      );
      const marks = {
        'first comment': prof.firstMs,
        'IMAP connected': prof.steps.connected,
        'first batch delivered': prof.steps.delivered,
      };
      printTimeline(' '.repeat(36), timelineOf(dir, prof.window.from, prof.window.to, bucketMs * 1000), bucketMs * 1000, marks);
    }
  } finally {
    if (keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const attN = arg('attachment-messages', 1000);
  const attKb = arg('attachment-kb', 750);
  const mixedN = arg('mixed-messages', 5000);
  const mixedKb = arg('mixed-attachment-kb', 100);
  const textN = arg('text-messages', 5000);
  const runs = arg('runs', 3);
  const which = mailboxes();
  const d = await startBenchDovecot();
  try {
    console.log(
      `IMAP sync, median of ${runs} runs (msg/s); hand-built = imapflow → mailparser → sync-raw-emails (batches of 128);` +
        ` mailgate = service listening → every comment acknowledged by the emulator; load average ${loadavg()[0]!.toFixed(2)}`,
    );
    console.log(
      `${'mailbox'.padEnd(34)} ${pad('size', 9)} ${pad('raw fetch', 10)} ${pad('hand-built', 10)} ${pad('mailgate', 10)} ${pad('÷ hand', 9)} ${pad('÷ raw', 9)} ${pad('peak RSS', 9)}`,
    );
    const all: Array<[string, Mailbox]> = [
      ['attachments', { label: `attachments: ${attN} × ${attKb} KiB`, user: 'att', n: attN, make: (i) => attachmentMessage(i, attKb) }],
      ['mixed', { label: `mixed: ${mixedN}, 30 % × ${mixedKb} KiB`, user: 'mixed', n: mixedN, make: (i) => mixedMessage(i, mixedKb) }],
      ['text', { label: `text only: ${textN} messages`, user: 'text', n: textN, make: textMessage }],
    ];
    for (const [name, box] of all) if (which.has(name)) await benchMailbox(d, box, runs);
    const vs = option('vs-cli');
    if (which.has('new-mail'))
      await benchNewMail(d, arg('appends', 50), arg('append-pause-ms', 2500), CLI, vs === undefined ? undefined : resolve(vs));
  } finally {
    await d.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
