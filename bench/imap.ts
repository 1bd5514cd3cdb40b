/**
 * IMAP benchmark (`npm run bench:imap`): fills a Dovecot mailbox and prints, for an
 * attachment-heavy and a text-only mailbox, raw imapflow full-source fetch messages/s beside
 * mailgate's end-to-end sync (IMAP → parse → store → emulator acknowledged) messages/s, and
 * the peak RSS of the `mailgate serve` process.
 *
 *   node dist/bench/imap.js [--attachment-messages 1000] [--attachment-kb 750] [--text-messages 5000] [--runs 3]
 *
 * mailgate runs as `mailgate serve --config …` in a child process (its peak RSS is the
 * kernel's VmHWM of that process, parse workers included); the emulator runs in this
 * process. The end-to-end time runs from the moment the service listens (process start-up
 * excluded; IMAP login included) until the emulator holds every comment.
 * `--cpu-prof-dir DIR` writes a CPU profile of each `mailgate serve` run into DIR.
 * Dovecot's index is built and the page cache warmed by one unmeasured fetch first.
 * Under each mailbox: the CPU seconds mailgate, Dovecot and the emulator spent during the
 * sync, and the fastest rate those allow on this machine's cores even with perfect overlap.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ImapFlow } from 'imapflow';
import { createEmulator } from '../src/emulator/index.js';
import { cpuOf, cpuOfTree } from './support/cpu.js';
import { startBenchDovecot, type BenchDovecot } from './support/dovecot.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
  return v;
}

/** `--cpu-prof-dir DIR`: write a CPU profile of every `mailgate serve` run into DIR. */
function profileDir(): string | undefined {
  const i = process.argv.indexOf('--cpu-prof-dir');
  return i < 0 ? undefined : process.argv[i + 1];
}

function textMessage(i: number): Buffer {
  const para = `Hello team, order ${i} has not arrived yet and the tracking page shows no update since Monday. `.repeat(12);
  return Buffer.from(
    [
      `From: Customer ${i % 997} <c${i % 997}@example.com>`,
      'To: support@example.org',
      `Subject: Order ${i}`,
      `Message-ID: <bench-${i}@example.com>`,
      'Date: Mon, 02 Mar 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      para,
      '',
      '-- ',
      'Customer',
      '',
    ].join('\r\n'),
  );
}

function attachmentMessage(i: number, kb: number): Buffer {
  const b = `b-${i}`;
  const data = randomBytes(kb * 1024)
    .toString('base64')
    .replace(/.{76}/g, '$&\r\n');
  return Buffer.from(
    [
      `From: Customer ${i % 997} <c${i % 997}@example.com>`,
      'To: support@example.org',
      `Subject: Invoice ${i}`,
      `Message-ID: <bench-att-${i}@example.com>`,
      'Date: Mon, 02 Mar 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      `Content-Type: multipart/mixed; boundary="${b}"`,
      '',
      `--${b}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Please find invoice ${i} attached. Kind regards.`,
      '',
      `--${b}`,
      `Content-Type: application/pdf; name="invoice-${i}.pdf"`,
      'Content-Transfer-Encoding: base64',
      `Content-Disposition: attachment; filename="invoice-${i}.pdf"`,
      '',
      data,
      `--${b}--`,
      '',
    ].join('\r\n'),
  );
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
  /** CPU seconds during the sync: the service (workers included), Dovecot, and this process (the emulator). */
  cpu: { mailgate: number; dovecot: number; emulator: number };
}

/** One `mailgate serve` run against a fresh store; returns messages/s, peak RSS in MB and CPU seconds. */
async function mailgateSync(d: BenchDovecot, user: string, count: number): Promise<SyncRun> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-imap-'));
  const token = randomBytes(8).toString('hex');
  const emulator = createEmulator({ token, autoCreateSources: true, logger: false });
  const url = await emulator.listen(0, '127.0.0.1');
  writeFileSync(
    join(dir, 'mailgate.yaml'),
    [
      `store: sqlite:${join(dir, 'mailgate.db')}`,
      `api: { url: ${url}, token: "${token}" }`,
      'server: { listen: 127.0.0.1:0 }',
      'log_level: warn',
      'routes: [{ name: bench, source: bench/inbox }]',
      `adapters: { imap: [{ name: bench, route: bench, host: ${d.host}, port: ${d.port}, secure: false, auth: { user: ${user}, pass: pw-${user} }, folders: [INBOX], batch_size: 500 }] }`,
      '',
    ].join('\n'),
  );
  const profile = profileDir();
  const child = spawn(
    process.execPath,
    [...(profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`]), CLI, 'serve', '--config', join(dir, 'mailgate.yaml')],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  let t0 = 0;
  let cpu0 = { mailgate: 0, dovecot: 0, emulator: 0 };
  child.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
    if (t0 === 0 && stderr.includes('serving on')) {
      t0 = performance.now();
      cpu0 = { mailgate: cpuOf(child.pid!), dovecot: cpuOfTree(d.pid), emulator: ownCpu() };
    }
  });
  let rssMb = 0;
  try {
    while (t0 === 0 || emulator.stats().comments < count) {
      if (child.exitCode !== null) throw new Error(`mailgate serve exited with ${child.exitCode}: ${stderr}`);
      rssMb = Math.max(rssMb, peakRssMb(child.pid!));
      await new Promise((r) => setTimeout(r, 20));
    }
    const rate = count / ((performance.now() - t0) / 1000);
    const cpu = {
      mailgate: cpuOf(child.pid!) - cpu0.mailgate,
      dovecot: cpuOfTree(d.pid) - cpu0.dovecot,
      emulator: ownCpu() - cpu0.emulator,
    };
    rssMb = Math.max(rssMb, peakRssMb(child.pid!));
    return { rate, rssMb, cpu };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function benchMailbox(
  d: BenchDovecot,
  label: string,
  user: string,
  n: number,
  make: (i: number) => Buffer,
  runs: number,
): Promise<void> {
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
  const syncs: SyncRun[] = [];
  for (let r = 0; r < runs; r++) {
    raw.push(await rawFetch(d, user, { source: true }));
    syncs.push(await mailgateSync(d, user, n));
  }
  const rss = Math.max(...syncs.map((x) => x.rssMb));
  const rate = median(syncs.map((x) => x.rate));
  const line = (s: string, w: number) => s.padStart(w);
  console.log(
    `${label.padEnd(34)} ${line((bytes / 2 ** 20).toFixed(0) + ' MiB', 9)} ${line(median(raw).toFixed(0), 10)} ${line(rate.toFixed(0), 10)} ${line((rate / median(raw)).toFixed(2) + '×', 7)} ${line(rss.toFixed(0) + ' MB', 9)}`,
  );
  const cpu = (k: keyof SyncRun['cpu']) => median(syncs.map((x) => x.cpu[k]));
  const total = cpu('mailgate') + cpu('dovecot') + cpu('emulator');
  const bound = n / (total / availableParallelism());
  console.log(
    `${''.padEnd(34)} CPU during the sync: mailgate ${cpu('mailgate').toFixed(1)} s, Dovecot ${cpu('dovecot').toFixed(1)} s, emulator ${cpu('emulator').toFixed(1)} s` +
      ` = ${total.toFixed(1)} s on ${availableParallelism()} cores: no faster than ${bound.toFixed(0)} msg/s (${(bound / median(raw)).toFixed(2)}× raw fetch)`,
  );
}

async function main(): Promise<void> {
  const attN = arg('attachment-messages', 1000);
  const attKb = arg('attachment-kb', 750);
  const textN = arg('text-messages', 5000);
  const runs = arg('runs', 3);
  const d = await startBenchDovecot();
  try {
    console.log(`IMAP sync, median of ${runs} runs (msg/s); mailgate = service listening → every comment acknowledged by the emulator`);
    console.log(
      `${'mailbox'.padEnd(34)} ${'size'.padStart(9)} ${'raw fetch'.padStart(10)} ${'mailgate'.padStart(10)} ${'ratio'.padStart(7)} ${'peak RSS'.padStart(9)}`,
    );
    await benchMailbox(d, `attachments: ${attN} × ${attKb} KiB`, 'att', attN, (i) => attachmentMessage(i, attKb), runs);
    await benchMailbox(d, `text only: ${textN} messages`, 'text', textN, textMessage, runs);
  } finally {
    await d.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
