/**
 * Gmail benchmark (`npm run bench:gmail`): 10 mailboxes × 1,000 messages (30 % with a 100 KiB
 * attachment) in the Gmail stand-in, read by `mailgate serve` into the emulator. Prints:
 * - messages per second (from the moment the service listens until the emulator holds every
 *   comment) beside the ceiling Google's per-user quota allows: 250 units per second per
 *   mailbox at 5 units a read is 50 messages a second per mailbox, mailboxes in parallel;
 * - HTTP requests and quota units per message beside the minimum: list pages + batches of 50,
 *   and 5 units a read + 5 a list page;
 * - the most units any mailbox spent in one second, as the stand-in measured it (limit 250);
 * - mailgate's CPU per message beside the IMAP adapter's on the same messages (the stand-in's
 *   raw bytes of each message appended to a Dovecot mailbox per Gmail mailbox).
 *
 *   node dist/bench/gmail.js [--mailboxes 10] [--messages 1000] [--attachment-kb 100] [--runs 1] [--no-imap]
 *
 * The stand-in and the emulator run in this process; mailgate in a child (`mailgate serve`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildMessage, sampleMessage, type MessageSpec } from '../adapters/gmail/stand-in/message.js';
import { startGmailStandIn } from '../adapters/gmail/stand-in/server.js';
import { createEmulator } from '../src/emulator/index.js';
import { cpuOf } from './support/cpu.js';
import { startBenchDovecot } from './support/dovecot.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const PAGE_SIZE = 500;
const BATCH = 50;
const UNITS_PER_SECOND = 250;

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

const user = (m: number) => `support${m}@example.test`;
const specs = (m: number): MessageSpec[] =>
  Array.from({ length: MESSAGES }, (_, i) =>
    sampleMessage(i, { mailbox: user(m), tag: `bench-m${m}`, ...(i % 10 < 3 ? { attachmentBytes: ATTACHMENT } : {}) }),
  );

interface Run {
  seconds: number;
  /** mailgate's CPU seconds. */
  cpu: number;
  /** CPU seconds of this process meanwhile: the stand-in and the emulator. */
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

async function gmailRun(): Promise<Run & { http: number; units: number; maxUnitsPerSecond: number; overLimit: number }> {
  const standIn = await startGmailStandIn();
  const emu = createEmulator({ logger: false, token: 'bench-token', autoCreateSources: true });
  const url = await emu.listen(0, '127.0.0.1');
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-gmail-'));
  try {
    for (let m = 0; m < MAILBOXES; m++) {
      standIn.addMailbox(user(m));
      standIn.deliver(user(m), specs(m));
    }
    const key = join(dir, 'sa-key.json');
    writeFileSync(key, JSON.stringify(standIn.keyFile()));
    const mailboxes = Array.from({ length: MAILBOXES }, (_, m) => `{ user: "${user(m)}" }`).join(', ');
    const run = await serve(
      dir,
      [
        `store: sqlite:${join(dir, 'mailgate.db')}`,
        `api: { url: ${url}, token: "bench-token" }`,
        'server: { listen: 127.0.0.1:0 }',
        'log_level: warn',
        'routes: [{ name: bench, source: bench/gmail }]',
        `adapters: { gmail: [{ name: bench, route: bench, auth: { service_account: "${key}" }, api_url: "${standIn.url}", page_size: ${PAGE_SIZE}, mailboxes: [${mailboxes}] }] }`,
      ],
      () => emu.stats().comments,
    );
    const stats = Array.from({ length: MAILBOXES }, (_, m) => standIn.stats(user(m)));
    return {
      ...run,
      http: standIn.http.api + standIn.http.batch,
      units: stats.reduce((a, s) => a + s.units, 0),
      maxUnitsPerSecond: Math.max(...stats.map((s) => s.maxUnitsPerSecond)),
      overLimit: stats.reduce((a, s) => a + s.overLimit, 0),
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
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-gmail-imap-'));
  try {
    for (let m = 0; m < MAILBOXES; m++) dovecot.addUser(`bench${m}`, `pw-bench${m}`);
    for (let m = 0; m < MAILBOXES; m++)
      dovecot.fill(
        `bench${m}`,
        specs(m).map((spec, i) => buildMessage(spec, m * MESSAGES + i).raw),
      );
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
    `bench:gmail — ${MAILBOXES} mailboxes × ${MESSAGES} messages (30 % with a ${ATTACHMENT / 1024} KiB attachment), ${RUNS} run(s), load ${f(loadavg()[0]!, 2)}`,
  );
  const gmail: Array<Awaited<ReturnType<typeof gmailRun>>> = [];
  const imap: Run[] = [];
  for (let r = 0; r < RUNS; r++) {
    const g = await gmailRun();
    console.log(
      `  run ${r + 1}: gmail ${f(TOTAL / g.seconds)} msg/s in ${f(g.seconds)} s; CPU s: mailgate ${f(g.cpu)}, stand-in + emulator ${f(g.peers)}`,
    );
    gmail.push(g);
    if (process.argv.includes('--no-imap')) continue;
    const i = await imapRun();
    console.log(
      `  run ${r + 1}: imap  ${f(TOTAL / i.seconds)} msg/s in ${f(i.seconds)} s; CPU s: mailgate ${f(i.cpu)}, emulator ${f(i.peers)}`,
    );
    imap.push(i);
  }
  const g = gmail[Math.floor(gmail.length / 2)]!;
  const pages = Math.ceil(MESSAGES / PAGE_SIZE);
  const minHttp = MAILBOXES * (pages + Math.ceil(MESSAGES / BATCH));
  const minUnits = MAILBOXES * (5 * pages + 5 * MESSAGES);
  const ceilingPerMailbox = UNITS_PER_SECOND / 5;
  const seconds = median(gmail.map((x) => x.seconds));
  console.log('');
  console.log(
    `  messages/s            ${f(TOTAL / seconds)}   (ceiling from Google's per-user quota: ${f(ceilingPerMailbox * MAILBOXES)} = ${f(ceilingPerMailbox)} per mailbox × ${MAILBOXES})`,
  );
  console.log(
    `  HTTP requests/message ${f(g.http / TOTAL, 3)}   (minimum ${f(minHttp / TOTAL, 3)}: ${pages} list page(s) + ${Math.ceil(MESSAGES / BATCH)} batches of ${BATCH} per mailbox; plus profile, labels, the large-message search)`,
  );
  console.log(`  quota units/message   ${f(g.units / TOTAL, 3)}   (minimum ${f(minUnits / TOTAL, 3)}: 5 a read + 5 a list page)`);
  console.log(
    `  most units/s/mailbox  ${g.maxUnitsPerSecond}     (Google's limit: ${UNITS_PER_SECOND}; calls refused over a limit: ${g.overLimit})`,
  );
  console.log(`  mailgate CPU/message  ${f((median(gmail.map((x) => x.cpu)) / TOTAL) * 1e3, 3)} ms (gmail)`);
  if (imap.length > 0) {
    console.log(
      `                        ${f((median(imap.map((x) => x.cpu)) / TOTAL) * 1e3, 3)} ms (imap, the same messages from Dovecot; ${f(TOTAL / median(imap.map((x) => x.seconds)))} msg/s)`,
    );
  }
}

await main();
