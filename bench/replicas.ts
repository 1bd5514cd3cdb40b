/**
 * bench:replicas — 1, 2 and 3 `mailgate serve` replicas (the built CLI, each its own process)
 * on one PostgreSQL, syncing the same 50 pre-filled Dovecot mailboxes into one emulator from
 * a fresh database: messages/s for each beside the single-replica rate (target on this 2-core
 * machine: no collapse, three replicas ≥ 0.9× of one), the mailbox leases granted during the
 * sync beyond the first 50 (startup hand-overs), and those granted in a steady-state window
 * after it (churn; target 0). Also the PostgreSQL CPU per 1,000 messages, which says where the
 * shared database would become the limit.
 *
 * Then the catch-up case: 3 replicas holding `catchUpMailboxes` idle mailboxes (default 1,000),
 * one killed with SIGKILL: the time until every mailbox idles again on the other two.
 *
 * Usage: npm run bench:replicas -- [messagesPerMailbox=200] [steadySeconds=10] [catchUpMailboxes=1000]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createEmulator } from '../src/emulator/index.js';
import { createTestDatabase, startPostgres, type PostgresServer } from '../test/support/postgres.js';
import { argInt } from './support/args.js';
import { cpuByThread, cpuOf, cpuOfTree } from './support/cpu.js';
import { startBenchDovecot, type BenchDovecot } from './support/dovecot.js';

const CLI = fileURLToPath(new URL('../cli/mailgate.js', import.meta.url));
const MAILBOXES = 50;
const perMailbox = argInt(2, 200);
const steadySeconds = argInt(3, 10);
const catchUpMailboxes = argInt(4, 1_000);
const ADMIN_KEY = 'bench-admin-key-0123456789';

function message(user: string, i: number): Buffer {
  const attach = i % 10 < 3;
  const head = [
    `From: Customer ${i} <c${i}@example.com>`,
    `To: ${user}@support.example`,
    `Subject: order ${i} for ${user}`,
    `Message-ID: <${user}-${i}@bench.mailgate>`,
    'Date: Mon, 02 Mar 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
  ];
  const text = `Hello,\r\n\r\nmy order ${i} has not arrived yet. Could you check?\r\n\r\nThanks,\r\nCustomer ${i}\r\n`;
  if (!attach) return Buffer.from([...head, 'Content-Type: text/plain; charset=utf-8', '', text].join('\r\n'));
  const b = `b${i}`;
  const pdf = randomBytes(6_000).toString('base64').replace(/.{76}/g, '$&\r\n');
  return Buffer.from(
    [
      ...head,
      `Content-Type: multipart/mixed; boundary="${b}"`,
      '',
      `--${b}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      text,
      `--${b}`,
      'Content-Type: application/pdf; name="invoice.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      pdf,
      `--${b}--`,
      '',
    ].join('\r\n'),
  );
}

function config(storeUrl: string, apiUrl: string, token: string, d: BenchDovecot, users: string[], admin = false): string {
  const accounts = users.map(
    (u) => `    - { name: ${u}, route: bench, host: ${d.host}, port: ${d.port}, secure: false, auth: { user: ${u}, pass: pw-${u} } }`,
  );
  return [
    `store: ${storeUrl}`,
    `api: { url: ${apiUrl}, token: "${token}" }`,
    admin ? `server: { listen: 127.0.0.1:0, api_keys: ["${ADMIN_KEY}"] }` : 'server: { listen: 127.0.0.1:0 }',
    'log_level: warn',
    'routes: [{ name: bench, source: bench/inbox }]',
    'adapters:',
    '  imap:',
    ...accounts,
    '',
  ].join('\n');
}

interface Run {
  replicas: number;
  /** Seconds from spawning the replicas until all serve. */
  startup: number;
  rate: number;
  /** The rate over the second half of the messages: every replica's processes warmed up (JIT, caches). */
  secondHalfRate: number;
  seconds: number;
  /** Lease grants beyond one per mailbox while syncing (hand-overs as replicas joined). */
  handovers: number;
  /** Lease grants in the steady-state window after the sync. */
  steadyGrants: number;
  /** Requests the emulator answered (delivery batches, and the sources' set-up). */
  requests: number;
  /** The CPU all processes of the run used, as a share of every core for the sync's duration. */
  busy: number;
  /** The replicas' CPU seconds during the sync by thread name (main and parse workers, V8's JIT and GC helpers, libuv). */
  threads: Map<string, number>;
  mailgateCpu: number;
  postgresCpuPer1000: number;
}

/**
 * CPU seconds of all replicas by kind of thread: `main` (the event loop), `busiest other` (the
 * parse worker) and `helpers` (V8's JIT compiler and GC threads, libuv's pool), summed.
 */
function threadsOf(children: ChildProcess[]): Map<string, number> {
  const sum = new Map<string, number>();
  const add = (k: string, sec: number): void => void sum.set(k, (sum.get(k) ?? 0) + sec);
  for (const c of children) {
    const byTid = cpuByThread(c.pid!);
    add('main', byTid.get(c.pid!) ?? 0);
    const others = [...byTid]
      .filter(([tid]) => tid !== c.pid)
      .map(([, sec]) => sec)
      .sort((a, b) => b - a);
    add('parse worker', others[0] ?? 0);
    add(
      'helpers',
      others.slice(1).reduce((a, b) => a + b, 0),
    );
  }
  return sum;
}

async function tokenSum(url: string): Promise<number> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ s: string | null }>('SELECT sum(token) AS s FROM leases');
    return Number(rows[0]?.s ?? 0);
  } finally {
    await db.end();
  }
}

async function runReplicas(k: number, server: PostgresServer, d: BenchDovecot, users: string[], total: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-replicas-'));
  const storeUrl = await createTestDatabase('mailgate_bench_replicas');
  const token = randomBytes(8).toString('hex');
  const emulator = createEmulator({ token, autoCreateSources: true, logger: false });
  const apiUrl = await emulator.listen(0, '127.0.0.1');
  writeFileSync(join(dir, 'mailgate.yaml'), config(storeUrl, apiUrl, token, d, users));
  // The schema is created before the clock starts (every run pays the same).
  const children: ChildProcess[] = [];
  const stderr: string[] = [];
  const spawnedAt = performance.now();
  for (let i = 0; i < k; i++) {
    // MAILGATE_BENCH_CPU_PROF=DIR: a CPU profile of each replica in DIR/<replicas>/.
    const prof = process.env['MAILGATE_BENCH_CPU_PROF'];
    const profile = prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}/${k}`] : [];
    const child = spawn(process.execPath, [...profile, CLI, 'serve', '--config', join(dir, 'mailgate.yaml')], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    stderr.push('');
    child.stderr!.on('data', (b: Buffer) => (stderr[i] += b.toString()));
    children.push(child);
  }
  try {
    // The clock starts when the first replica serves (process start-up is not sync throughput):
    // a replica that finds no other registered takes its leases at once, so mail is read from
    // then on, and the replicas that serve later take their shares over from it. The shared
    // processes' CPU (PostgreSQL, Dovecot, the emulator) counts from that moment too, and each
    // replica's from when it serves (its start-up is not sync work), so the CPU figures cover
    // the same window as the rate.
    let t0 = 0;
    let pg0 = 0;
    let dv0 = 0;
    let own0 = process.cpuUsage();
    const mg0: Array<number | undefined> = children.map(() => undefined);
    const threads0 = new Map<string, number>();
    while (mg0.some((v) => v === undefined)) {
      for (let i = 0; i < k; i++) {
        if (mg0[i] !== undefined || !stderr[i]!.includes('serving on')) continue;
        if (t0 === 0) {
          t0 = performance.now();
          pg0 = cpuOfTree(server.pid());
          dv0 = cpuOfTree(d.pid);
          own0 = process.cpuUsage();
        }
        mg0[i] = cpuOf(children[i]!.pid!);
        for (const [name, sec] of threadsOf([children[i]!])) threads0.set(name, (threads0.get(name) ?? 0) + sec);
      }
      const dead = children.findIndex((c) => c.exitCode !== null);
      if (dead !== -1) throw new Error(`replica ${dead} exited: ${stderr[dead]}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const startup = (performance.now() - spawnedAt) / 1000;
    let half = 0;
    while (emulator.stats().comments < total) {
      if (half === 0 && emulator.stats().comments >= total / 2) half = performance.now();
      const dead = children.findIndex((c) => c.exitCode !== null);
      if (dead !== -1) throw new Error(`replica ${dead} exited: ${stderr[dead]}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const seconds = (performance.now() - t0) / 1000;
    const secondHalf = (performance.now() - half) / 1000;
    const pgCpu = cpuOfTree(server.pid()) - pg0;
    const dovecotCpu = cpuOfTree(d.pid) - dv0;
    const own = process.cpuUsage(own0);
    const emulatorCpu = (own.user + own.system) / 1e6;
    const mailgateCpu = children.reduce((a, c, i) => a + cpuOf(c.pid!) - mg0[i]!, 0);
    const threads = threadsOf(children);
    for (const [name, sec] of threads0) threads.set(name, (threads.get(name) ?? 0) - sec);
    const atDone = await tokenSum(storeUrl);
    await new Promise((r) => setTimeout(r, steadySeconds * 1000));
    const steady = await tokenSum(storeUrl);
    if (emulator.stats().comments !== total || emulator.stats().ai_units !== total)
      throw new Error(`expected ${total} comments billed once, got ${JSON.stringify(emulator.stats())}`);
    return {
      replicas: k,
      startup,
      rate: total / seconds,
      secondHalfRate: total / 2 / secondHalf,
      seconds,
      handovers: atDone - MAILBOXES,
      steadyGrants: steady - atDone,
      threads,
      requests: Object.values(emulator.stats().requests).reduce((a, byStatus) => a + Object.values(byStatus).reduce((x, y) => x + y, 0), 0),
      mailgateCpu,
      postgresCpuPer1000: (pgCpu / total) * 1000,
      // Every process of the run: the replicas, PostgreSQL, Dovecot, and this one (the emulator).
      busy: (mailgateCpu + pgCpu + dovecotCpu + emulatorCpu) / (seconds * availableParallelism()),
    };
  } finally {
    await Promise.all(
      children.map((c) => {
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        return exited;
      }),
    );
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** IMAP accounts idling on one replica (its /api/status), or 0 when it does not answer. */
async function idling(url: string): Promise<number> {
  try {
    const res = await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${ADMIN_KEY}` }, signal: AbortSignal.timeout(5_000) });
    const body = (await res.json()) as { adapters: Array<{ kind: string; state: string }> };
    return body.adapters.filter((a) => a.kind === 'imap' && a.state === 'idle').length;
  } catch {
    return 0;
  }
}

/** 3 replicas × `n` idle mailboxes; one killed: seconds until all idle again on the other two. */
async function catchUp(n: number, d: BenchDovecot): Promise<{ allIdle: number; catchUp: number; reaped: number }> {
  const users = Array.from({ length: n }, (_, i) => `idle${i}`);
  for (const u of users) {
    d.addUser(u, `pw-${u}`);
    d.fill(u, [message(u, 0)]);
  }
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-catchup-'));
  const storeUrl = await createTestDatabase('mailgate_bench_catchup');
  const token = randomBytes(8).toString('hex');
  const emulator = createEmulator({ token, autoCreateSources: true, logger: false });
  const apiUrl = await emulator.listen(0, '127.0.0.1');
  writeFileSync(join(dir, 'mailgate.yaml'), config(storeUrl, apiUrl, token, d, users, true));
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  const t0 = performance.now();
  for (let i = 0; i < 3; i++) {
    const child = spawn(process.execPath, [CLI, 'serve', '--config', join(dir, 'mailgate.yaml')], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    urls.push(
      await new Promise<string>((resolve, reject) => {
        let err = '';
        child.stderr!.on('data', (b: Buffer) => {
          err += b.toString();
          const m = /serving on (http:\/\/\S+)/.exec(err);
          if (m) resolve(m[1]!);
        });
        child.once('exit', () => reject(new Error(`replica exited: ${err}`)));
      }),
    );
  }
  const total = async (live: string[]): Promise<number> => (await Promise.all(live.map(idling))).reduce((a, b) => a + b, 0);
  try {
    while ((await total(urls)) < n) await new Promise((r) => setTimeout(r, 250));
    const allIdle = (performance.now() - t0) / 1000;
    const victim = children[0]!;
    const killedAt = performance.now();
    victim.kill('SIGKILL');
    await new Promise((r) => victim.once('exit', r));
    while ((await total(urls.slice(1))) < n) await new Promise((r) => setTimeout(r, 250));
    return { allIdle, catchUp: (performance.now() - killedAt) / 1000, reaped: n };
  } finally {
    await Promise.all(
      children.map((c) => {
        if (c.exitCode !== null || c.signalCode !== null) return undefined;
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        return exited;
      }),
    );
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const server = await startPostgres({ durable: true });
  process.env.MAILGATE_TEST_POSTGRES_URL = server.url;
  const d = await startBenchDovecot();
  try {
    const users = Array.from({ length: MAILBOXES }, (_, i) => `box${i}`);
    for (const u of users) {
      d.addUser(u, `pw-${u}`);
      d.fill(
        u,
        Array.from({ length: perMailbox }, (_, i) => message(u, i)),
      );
    }
    const total = MAILBOXES * perMailbox;
    console.log(`bench:replicas — ${MAILBOXES} mailboxes × ${perMailbox} messages (30 % with a 6 KB attachment) = ${total}`);
    console.log(
      'each run: fresh PostgreSQL database and emulator, replicas started together; timed from when the first serves until the emulator holds every comment\n',
    );
    // Warm-up (Dovecot's indexes, page cache), unmeasured.
    await runReplicas(1, server, d, users, total);
    const runs: Run[] = [];
    for (const k of [1, 2, 3]) runs.push(await runReplicas(k, server, d, users, total));
    const one = runs[0]!.rate;
    const oneHalf = runs[0]!.secondHalfRate;
    console.log(
      'replicas  start s  msg/s   × one  2nd half msg/s  × one  seconds  hand-overs  steady grants  API requests  mailgate CPU s  PostgreSQL CPU s/1000 msgs  cores busy',
    );
    for (const r of runs) {
      console.log(
        `${String(r.replicas).padStart(8)}  ${r.startup.toFixed(1).padStart(7)}  ${r.rate.toFixed(0).padStart(5)}  ${(r.rate / one).toFixed(2).padStart(5)}  ${r.secondHalfRate.toFixed(0).padStart(14)}  ${(r.secondHalfRate / oneHalf).toFixed(2).padStart(5)}  ${r.seconds
          .toFixed(1)
          .padStart(
            7,
          )}  ${String(r.handovers).padStart(10)}  ${String(r.steadyGrants).padStart(13)}  ${String(r.requests).padStart(12)}  ${r.mailgateCpu
          .toFixed(1)
          .padStart(14)}  ${r.postgresCpuPer1000.toFixed(3).padStart(10)}  ${(r.busy * 100).toFixed(0).padStart(9)} %`,
      );
    }
    for (const r of runs) {
      const parts = [...r.threads].filter(([, sec]) => sec >= 0.05).sort((a, b) => b[1] - a[1]);
      console.log(`  ${r.replicas} replica(s), CPU s by thread: ${parts.map(([n, sec]) => `${n} ${sec.toFixed(1)}`).join(', ')}`);
    }
    const three = runs[2]!.rate / one;
    const threeHalf = runs[2]!.secondHalfRate / oneHalf;
    console.log(
      `\ntarget: three replicas ≥ 0.90× one → ${three.toFixed(2)}× whole sync, ${threeHalf.toFixed(2)}× second half: ${three >= 0.9 ? 'met' : 'NOT met'}`,
    );
    console.log(`target: no lease churn in steady state → ${runs.every((r) => r.steadyGrants === 0) ? 'met' : 'NOT met'}`);
    const c = await catchUp(catchUpMailboxes, d);
    console.log(`\n3 replicas × ${catchUpMailboxes} idle mailboxes: all idling ${c.allIdle.toFixed(1)} s after start`);
    console.log(`one replica killed (SIGKILL): all ${catchUpMailboxes} idling again on the other two after ${c.catchUp.toFixed(1)} s`);
  } finally {
    await d.stop();
    await server.stop();
  }
}

await main();
