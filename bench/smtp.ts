/**
 * SMTP intake throughput: `connections` SMTP clients at once, each sending messages of about
 * 5 KB one after another (MAIL, RCPT, DATA pipelined), to
 *  1. the smtp adapter over a real SQLite store (synchronous=FULL, fresh file) through the
 *     parse pool and the push sink: each 250 means the message is durable;
 *  2. a plain smtp-server in this process that reads the message and answers 250 storing
 *     nothing: the protocol's own cost on this machine.
 *
 *   node dist/bench/smtp.js [messages=5000] [connections=8]
 * Prints messages/s (250 received) and time from the end of DATA to the 250, p50/p99, for both.
 * The senders run on a worker thread, apart from the listener's event loop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { fsyncMedianMs } from './support/fsync.js';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { smtpEntrySchema } from '../adapters/smtp/config.js';
import { SmtpAdapter } from '../adapters/smtp/adapter.js';
import { ConfigSchema } from '../src/config/schema.js';
import { createLogger } from '../src/logger.js';
import { createIntake } from '../src/pipeline/intake.js';
import { ParsePool } from '../src/pipeline/pool.js';
import { openStore } from '../src/store/index.js';
import { argInt } from './support/args.js';

const MESSAGES = argInt(2, 5_000);
const CONNECTIONS = argInt(3, 8);

const PARAGRAPH =
  'Hello team,\r\nthe invoice for last month looks wrong: we were charged twice for the same order.\r\n' + 'Could you check?\r\n\r\n';

function message(run: string, i: number): Buffer {
  return Buffer.from(
    `From: Customer ${i} <c${i}@example.com>\r\nTo: support@acme.example\r\nSubject: Invoice question ${i}\r\n` +
      `Message-ID: <bench-${run}-${i}@example.com>\r\nDate: Mon, 04 Mar 2024 09:00:00 +0000\r\n` +
      `Content-Type: text/plain; charset=utf-8\r\n\r\n${PARAGRAPH.repeat(40)}Ref ${i}\r\n.\r\n`,
  );
}

/** One SMTP connection: replies as they come, one at a time. */
class Conn {
  private buf = '';
  private lines: string[] = [];
  private waiting: Array<(code: number) => void> = [];
  constructor(private readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf += d.toString('latin1');
      let nl: number;
      while ((nl = this.buf.indexOf('\r\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 2);
        if (line[3] === '-') continue;
        const code = Number(line.slice(0, 3));
        const w = this.waiting.shift();
        if (w) w(code);
        else this.lines.push(line);
      }
    });
  }
  static async open(port: number): Promise<Conn> {
    const c = new Conn(connect(port, '127.0.0.1'));
    await c.expect(220);
    c.socket.write('EHLO bench.example.org\r\n');
    await c.expect(250);
    return c;
  }
  reply(): Promise<number> {
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(Number(l.slice(0, 3)));
    return new Promise((r) => this.waiting.push(r));
  }
  async expect(code: number): Promise<void> {
    const got = await this.reply();
    if (got !== code) throw new Error(`expected ${code}, got ${got}`);
  }
  write(data: string | Buffer): void {
    this.socket.write(data);
  }
  close(): void {
    this.socket.end('QUIT\r\n');
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

interface DriveJob {
  port: number;
  run: string;
  messages: number;
  connections: number;
}
type Figures = { perSecond: number; p50: number; p99: number };

/**
 * The senders run on a thread of their own, as remote mail servers would: their protocol work
 * does not take the event loop of the listener being measured.
 */
function drive(port: number, run: string): Promise<Figures> {
  const job: DriveJob = { port, run, messages: MESSAGES, connections: CONNECTIONS };
  const worker = new Worker(new URL(import.meta.url), { workerData: job });
  return new Promise<Figures>((resolve, reject) => {
    worker.once('message', (f: Figures) => {
      resolve(f);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/** Sends `messages` over `connections` connections; messages/s and end-of-DATA → 250 latencies. */
async function send({ port, run, messages: MESSAGES, connections: CONNECTIONS }: DriveJob): Promise<Figures> {
  const conns = await Promise.all(Array.from({ length: CONNECTIONS }, () => Conn.open(port)));
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    conns.map(async (c) => {
      for (let i = next++; i < MESSAGES; i = next++) {
        c.write('MAIL FROM:<c@example.com>\r\nRCPT TO:<support@acme.example>\r\nDATA\r\n');
        await c.expect(250);
        await c.expect(250);
        await c.expect(354);
        const start = performance.now();
        c.write(message(run, i));
        await c.expect(250);
        latencies.push(performance.now() - start);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  conns.forEach((c) => c.close());
  latencies.sort((a, b) => a - b);
  return { perSecond: MESSAGES / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function baseline(): Promise<{ perSecond: number; p50: number; p99: number }> {
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
    return await drive(port, 'plain');
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

async function durable(): Promise<Figures & { commits: number; busy: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-smtp-'));
  const config = ConfigSchema.parse({ routes: [{ name: 'support', source: 'acme/support' }] });
  const store = await openStore(`sqlite:${join(dir, 'bench.db')}`);
  const pool = new ParsePool({ timeoutMs: config.parsing.timeout_ms, maxMessageBytes: config.parsing.max_message_bytes });
  const routes = new Map(config.routes.map((r) => [r.name, r]));
  const logger = createLogger(false);
  const intake = createIntake({
    store,
    routes,
    parse: (raw, opts) => pool.parseEncoded(raw, opts),
    parsing: { body: config.parsing.body, headers: config.parsing.headers, maxMessageBytes: config.parsing.max_message_bytes },
    maxOutbox: 10_000_000,
    logger,
  });
  // Commits counted where they happen: one enqueue transaction each.
  let commits = 0;
  const enqueue = store.enqueue.bind(store);
  store.enqueue = (inputs, checkpoint, fence) => ((commits += 1), enqueue(inputs, checkpoint, fence));
  const entry = smtpEntrySchema.parse({ name: 'bench', route: 'support', listen: '127.0.0.1:0', recipients: [{ match: '*' }] });
  const adapter = new SmtpAdapter(entry, logger);
  const stop = new AbortController();
  const running = adapter.start(intake, stop.signal);
  while (adapter.listening() === undefined) await new Promise((r) => setTimeout(r, 10));
  try {
    const before = performance.eventLoopUtilization();
    const figures = await drive(adapter.listening()!.port, 'durable');
    return { ...figures, commits, busy: performance.eventLoopUtilization(before).utilization };
  } finally {
    stop.abort();
    await running;
    await pool.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const plain = await baseline();
  const stored = await durable();
  const fmt = (r: { perSecond: number; p50: number; p99: number }) =>
    `${r.perSecond.toFixed(0).padStart(6)} messages/s  250 after DATA p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms`;
  console.log(`${MESSAGES} messages of ~5 KB over ${CONNECTIONS} SMTP connections`);
  console.log(`smtp-server, nothing stored:  ${fmt(plain)}`);
  console.log(`mailgate smtp, durable 250:   ${fmt(stored)}  (${stored.commits} commits)`);
  const probe = mkdtempSync(join(tmpdir(), 'mailgate-bench-fsync-'));
  const fsyncMs = fsyncMedianMs(probe);
  rmSync(probe, { recursive: true, force: true });
  // The listener, the push sink and the store's commit share one event loop: busy all the time,
  // it cannot go faster than the measured rate divided by its busy share.
  console.log(
    `listener's event loop busy ${(stored.busy * 100).toFixed(0)} % of the run (no faster than ` +
      `${(stored.perSecond / stored.busy).toFixed(0)} messages/s on it); ${(MESSAGES / stored.commits).toFixed(1)} messages per commit; ` +
      `disk fdatasync of 4 KiB p50 ${fsyncMs.toFixed(2)} ms`,
  );
}

if (isMainThread) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
} else {
  void send(workerData as DriveJob).then((f) => parentPort!.postMessage(f));
}
