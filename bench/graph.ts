/**
 * Graph benchmark (`npm run bench:graph`): 10 mailboxes × 1,000 messages (30 % with a 100 KiB
 * attachment) in the Graph stand-in, read by `mailgate serve` into the emulator. Prints:
 * - messages per second (from the moment the service listens until the emulator holds every
 *   comment) beside the ceiling Graph's documented limits allow: 10,000 requests per 10 minutes
 *   per mailbox is about 16.7 content reads a second per mailbox, mailboxes in parallel;
 * - requests per message beside the minimum: HTTP requests (a `$batch` is one) against delta
 *   pages + batches of 20, and requests as Graph counts them (each `$batch` member) against
 *   delta pages + one read per message;
 * - mailgate's CPU per message beside the IMAP adapter's on the same messages (the stand-in's
 *   MIME of each message appended to a Dovecot mailbox per Graph mailbox).
 *
 *   node dist/bench/graph.js [--mailboxes 10] [--messages 1000] [--attachment-kb 100] [--runs 1] [--no-imap]
 *
 * The stand-in and the emulator run in this process; mailgate in a child (`mailgate serve`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderMime, sampleMessage, type MessageSpec } from '../adapters/graph/stand-in/message.js';
import { startGraphStandIn } from '../adapters/graph/stand-in/server.js';
import { createEmulator } from '../src/emulator/index.js';
import { cpuOf } from './support/cpu.js';
import { startBenchDovecot } from './support/dovecot.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const CLIENT_ID = '3b1a5f0e-0000-4000-8000-000000000001';
const PAGE_SIZE = 100;
const BATCH = 20;
/** Graph's documented per-mailbox request budget. */
const PER_10_MIN = 10_000;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
  return v;
}

const MAILBOXES = arg('mailboxes', 10);
const MESSAGES = arg('messages', 1000);
const ATTACHMENT = arg('attachment-kb', 100) * 1024;
const RUNS = arg('runs', 1);
const TOTAL = MAILBOXES * MESSAGES;

const user = (m: number) => `support${m}@contoso.test`;
const specs = (m: number): MessageSpec[] =>
  Array.from({ length: MESSAGES }, (_, i) =>
    sampleMessage(i, { mailbox: user(m), tag: `bench-m${m}`, ...(i % 10 < 3 ? { attachmentBytes: ATTACHMENT } : {}) }),
  );

interface Run {
  seconds: number;
  /** mailgate's CPU seconds. */
  cpu: number;
  /** CPU seconds of this process meanwhile: the stand-in (or Dovecot's client side: none) and the emulator. */
  peers: number;
}

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

async function graphRun(): Promise<Run & { http: number; counted: number; maxInFlight: number }> {
  const standIn = await startGraphStandIn();
  const emu = createEmulator({ logger: false, token: 'bench-token', autoCreateSources: true });
  const url = await emu.listen(0, '127.0.0.1');
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-graph-'));
  try {
    for (let m = 0; m < MAILBOXES; m++) {
      standIn.addMailbox(user(m));
      standIn.deliver(user(m), 'inbox', specs(m));
    }
    const mailboxes = Array.from({ length: MAILBOXES }, (_, m) => `{ user: "${user(m)}" }`).join(', ');
    const run = await serve(
      dir,
      [
        `store: sqlite:${join(dir, 'mailgate.db')}`,
        `api: { url: ${url}, token: "bench-token" }`,
        'server: { listen: 127.0.0.1:0 }',
        'log_level: warn',
        'routes: [{ name: bench, source: bench/graph }]',
        `adapters: { graph: [{ name: bench, route: bench, tenant_id: ${standIn.tenantId}, client_id: ${CLIENT_ID}, auth: { client_secret: stand-in-secret }, ` +
          `authority_url: "${standIn.url}", graph_url: "${standIn.graphUrl}", page_size: ${PAGE_SIZE}, mailboxes: [${mailboxes}] }] }`,
      ],
      () => emu.stats().comments,
    );
    const stats = Array.from({ length: MAILBOXES }, (_, m) => standIn.stats(user(m)));
    return {
      ...run,
      http: standIn.http.graph,
      counted: stats.reduce((a, s) => a + s.requests, 0),
      maxInFlight: Math.max(...stats.map((s) => s.maxInFlight)),
    };
  } finally {
    await emu.close();
    await standIn.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function imapRun(): Promise<Run> {
  const dovecot = await startBenchDovecot({ connections: MAILBOXES + 10 });
  const emu = createEmulator({ logger: false, token: 'bench-token', autoCreateSources: true });
  const url = await emu.listen(0, '127.0.0.1');
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-graph-imap-'));
  try {
    for (let m = 0; m < MAILBOXES; m++) dovecot.addUser(`bench${m}`, `pw-bench${m}`);
    for (let m = 0; m < MAILBOXES; m++) {
      dovecot.fill(
        `bench${m}`,
        specs(m).map((spec, i) => renderMime({ id: `AAkALgAAbench${m}x${i}AAA=`, spec, isRead: false, categories: [], changeKey: 1 })),
      );
    }
    const accounts = Array.from(
      { length: MAILBOXES },
      (_, m) =>
        `{ name: bench${m}, route: bench, host: ${dovecot.host}, port: ${dovecot.port}, secure: false, auth: { user: bench${m}, pass: pw-bench${m} } }`,
    ).join(', ');
    return await serve(
      dir,
      [
        `store: sqlite:${join(dir, 'mailgate.db')}`,
        `api: { url: ${url}, token: "bench-token" }`,
        'server: { listen: 127.0.0.1:0 }',
        'log_level: warn',
        'routes: [{ name: bench, source: bench/imap }]',
        `adapters: { imap: [${accounts}] }`,
      ],
      () => emu.stats().comments,
    );
  } finally {
    await emu.close();
    await dovecot.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f = (n: number, d = 1) => n.toFixed(d);

async function main(): Promise<void> {
  console.log(
    `bench:graph — ${MAILBOXES} mailboxes × ${MESSAGES} messages (30 % with a ${ATTACHMENT / 1024} KiB attachment), ${RUNS} run(s), load ${f(loadavg()[0]!, 2)}`,
  );
  const graph: Array<Awaited<ReturnType<typeof graphRun>>> = [];
  const imap: Run[] = [];
  for (let r = 0; r < RUNS; r++) {
    const g = await graphRun();
    console.log(
      `  run ${r + 1}: graph ${f(TOTAL / g.seconds)} msg/s in ${f(g.seconds)} s; CPU s: mailgate ${f(g.cpu)}, stand-in + emulator ${f(g.peers)}`,
    );
    graph.push(g);
    if (process.argv.includes('--no-imap')) continue;
    const i = await imapRun();
    console.log(
      `  run ${r + 1}: imap  ${f(TOTAL / i.seconds)} msg/s in ${f(i.seconds)} s; CPU s: mailgate ${f(i.cpu)}, emulator ${f(i.peers)}`,
    );
    imap.push(i);
  }
  const g = graph[Math.floor(graph.length / 2)]!;
  const pages = Math.ceil(MESSAGES / PAGE_SIZE);
  const minHttp = MAILBOXES * (pages + Math.ceil(MESSAGES / BATCH));
  const minCounted = MAILBOXES * (pages + MESSAGES);
  const ceilingPerMailbox = (PER_10_MIN / 600) * (MESSAGES / (MESSAGES + pages));
  const seconds = median(graph.map((x) => x.seconds));
  console.log('');
  console.log(
    `  messages/s            ${f(TOTAL / seconds)}   (ceiling from Graph's limits: ${f(ceilingPerMailbox * MAILBOXES)} sustained = ${f(ceilingPerMailbox)} per mailbox × ${MAILBOXES};`,
  );
  console.log(
    `                               ${MESSAGES} messages fit in one 10-minute budget of ${PER_10_MIN}, so a tenant allows this burst)`,
  );
  console.log(
    `  HTTP requests/message ${f(g.http / TOTAL, 3)}   (minimum ${f(minHttp / TOTAL, 3)}: ${pages} delta pages + ${Math.ceil(MESSAGES / BATCH)} batches of ${BATCH} per mailbox; plus folder look-ups)`,
  );
  console.log(
    `  counted requests/msg  ${f(g.counted / TOTAL, 3)}   (minimum ${f(minCounted / TOTAL, 3)}: delta pages + one read per message, each $batch member counted)`,
  );
  console.log(`  most in flight/mailbox ${g.maxInFlight}     (Graph's limit: 4)`);
  console.log(`  mailgate CPU/message  ${f((median(graph.map((x) => x.cpu)) / TOTAL) * 1e3, 3)} ms (graph)`);
  if (imap.length > 0) {
    console.log(
      `                        ${f((median(imap.map((x) => x.cpu)) / TOTAL) * 1e3, 3)} ms (imap, the same messages from Dovecot; ${f(TOTAL / median(imap.map((x) => x.seconds)))} msg/s)`,
    );
  }
}

await main();
