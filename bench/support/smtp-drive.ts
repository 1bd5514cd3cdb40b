/**
 * The SMTP bench's senders: `connections` clients at once, each sending messages of about 5 KB
 * one after another (MAIL, RCPT, DATA pipelined), on a thread of their own, as remote mail
 * servers would: their protocol work does not take the event loop of the listener being
 * measured, and their CPU is reported apart so it can be left out of the listener's.
 */
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { onReplyCodes } from './smtp-replies.js';

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
  /** Replies that arrived before anyone waited for them. */
  private early: number[] = [];
  private waiting: Array<(code: number) => void> = [];
  constructor(private readonly socket: Socket) {
    onReplyCodes(socket, (code) => {
      const w = this.waiting.shift();
      if (w) w(code);
      else this.early.push(code);
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
    const early = this.early.shift();
    if (early !== undefined) return Promise.resolve(early);
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

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

export interface DriveJob {
  port: number;
  /** Makes the Message-IDs of one run its own. */
  run: string;
  messages: number;
  connections: number;
}

/** Messages/s (250 received), end of DATA → 250 in ms, and the senders' own CPU in ms. */
export interface Figures {
  perSecond: number;
  p50: number;
  p99: number;
  senderCpuMs: number;
}

/** Runs the senders on a worker thread of this module. */
export function drive(job: DriveJob): Promise<Figures> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { smtpDrive: job } });
  return new Promise<Figures>((resolve, reject) => {
    worker.once('message', (f: Figures) => {
      resolve(f);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

async function send({ port, run, messages, connections }: DriveJob): Promise<Figures> {
  const conns = await Promise.all(Array.from({ length: connections }, () => Conn.open(port)));
  const latencies: number[] = [];
  let next = 0;
  const cpu = process.threadCpuUsage();
  const t0 = performance.now();
  await Promise.all(
    conns.map(async (c) => {
      for (let i = next++; i < messages; i = next++) {
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
  const used = process.threadCpuUsage(cpu);
  conns.forEach((c) => c.close());
  latencies.sort((a, b) => a - b);
  return {
    perSecond: messages / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    senderCpuMs: (used.user + used.system) / 1000,
  };
}

const job = (workerData as { smtpDrive?: DriveJob } | null)?.smtpDrive;
if (!isMainThread && job !== undefined) void send(job).then((f) => parentPort!.postMessage(f));
