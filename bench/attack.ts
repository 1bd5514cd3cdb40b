/**
 * npm run bench:attack [-- seconds]: each attack of the "bound before trust" review against a
 * running `mailgate serve` (built-in emulator, SQLite, every server on loopback), while a probe
 * on a worker thread of its own (support/livez-probe.ts) GETs /livez every 50 ms and a genuine raw-webhook sender (from 127.0.0.2) and SMTP sender (from
 * 127.0.0.3) keep sending. Per attack: the probe's p99 and max, RSS growth of the serve process
 * over its baseline, and the genuine senders' success rate (a 503 with Retry-After retried
 * counts as success once it lands). Bounded: every attack runs `seconds` with a fixed number of
 * connections, loopback only.
 */
import { spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { argInt } from './support/args.js';
import { probeLivez } from './support/livez-probe.js';

const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');
const SECONDS = argInt(2, 6);
const UPLOAD_KEY = 'bench-upload-key-0123456789';
const ADMIN_KEY = 'bench-admin-key-0123456789';
const BEARER = 'bench-bearer-key-0123456789';
const MIB = 1024 * 1024;
const TARGET = { p99: 50, max: 200, rssMb: 300 };

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

const mail = (tag: string, body = 'hello') =>
  `From: a@example.org\r\nTo: b@example.com\r\nSubject: ${tag}\r\nMessage-ID: <${tag}@bench>\r\n\r\n${body}\r\n`;

/** One HTTP request; resolves with the status (0 on a network error). */
function http(port: number, path: string, o: { method?: string; headers?: Record<string, string>; body?: Buffer; local?: string } = {}) {
  return new Promise<number>((resolve) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path,
      method: o.method ?? 'GET',
      headers: o.headers,
      localAddress: o.local,
      agent: false,
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(o.body);
  });
}

/** A body sent on a raw socket as fast as the server reads it; closes at `deadline`. */
function flood(port: number, head: string, body: Buffer, deadline: number): Promise<void> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.on('error', () => resolve());
    s.on('close', () => resolve());
    s.on('data', () => s.destroy());
    s.write(head);
    s.write(body, () => s.end());
    setTimeout(() => s.destroy(), Math.max(0, deadline - Date.now()));
  });
}

/** A minimal SMTP exchange from `local`; true on 250 after the dot. */
async function smtpSend(port: number, local: string, tag: string): Promise<boolean> {
  const s = connect({ port, host: '127.0.0.1', localAddress: local });
  s.on('error', () => undefined);
  let buf = '';
  const next = (): Promise<string> =>
    new Promise((resolve) => {
      const check = () => {
        const m = /(^|\r\n)(\d{3}) [^\r\n]*\r\n$/.exec(buf);
        if (m) {
          buf = '';
          s.off('data', onData);
          resolve(m[2]!);
        }
      };
      const onData = (d: Buffer) => ((buf += d.toString('latin1')), check());
      s.on('data', onData);
      s.once('close', () => resolve('000'));
      check();
    });
  try {
    if ((await next()) !== '220') return false;
    for (const line of ['EHLO genuine.example', 'MAIL FROM:<a@example.org>', 'RCPT TO:<b@example.com>', 'DATA']) {
      s.write(`${line}\r\n`);
      const code = await next();
      if (!code.startsWith('2') && !code.startsWith('3')) return false;
    }
    s.write(`${mail(tag)}.\r\n`);
    return (await next()) === '250';
  } finally {
    s.destroy();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Ports {
  http: number;
  smtp: number;
}

/** Runs the probe and the genuine senders for the duration of `attack`. */
/** Optional second argument: run only the attacks whose name contains it. */
const ONLY = process.argv[3];

async function measure(name: string, ports: Ports, pid: number, baseRss: number, attack: (deadline: number) => Promise<unknown>) {
  if (ONLY !== undefined && !name.includes(ONLY) && !name.startsWith('baseline')) return;
  const deadline = Date.now() + SECONDS * 1000;
  const genuine = { webhook: [0, 0], smtp: [0, 0] };
  let peakRss = rssMb(pid);
  let n = 0;
  const probe = probeLivez(ports.http, deadline);
  const rss = (async () => {
    while (Date.now() < deadline) {
      peakRss = Math.max(peakRss, rssMb(pid));
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const webhook = (async () => {
    while (Date.now() < deadline) {
      const tag = `${name}-w${n++}-${Date.now()}`;
      genuine.webhook[1]!++;
      for (let tries = 0; tries < 5; tries++) {
        const status = await http(ports.http, '/webhooks/worker-in', {
          method: 'POST',
          headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${BEARER}` },
          body: Buffer.from(mail(tag)),
          local: '127.0.0.2',
        });
        if (status === 200) {
          genuine.webhook[0]!++;
          break;
        }
        if (status !== 503) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const smtp = (async () => {
    while (Date.now() < deadline) {
      genuine.smtp[1]!++;
      if (await smtpSend(ports.smtp, '127.0.0.3', `${name}-s${n++}-${Date.now()}`)) genuine.smtp[0]!++;
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  const [probes] = await Promise.all([probe, attack(deadline), rss, webhook, smtp]);
  const sorted = [...probes].sort((a, b) => a - b);
  const rate = ([ok, all]: number[]) => (all === 0 ? '-' : `${((100 * ok!) / all!).toFixed(0)}% of ${all}`);
  const p99 = percentile(sorted, 99);
  const max = sorted.at(-1) ?? NaN;
  const grow = peakRss - baseRss;
  const ok = p99 < TARGET.p99 && max < TARGET.max && grow < TARGET.rssMb ? 'ok' : 'MISSED';
  console.log(
    `${name.padEnd(25)} probe p99 ${p99.toFixed(1).padStart(6)} ms  max ${max.toFixed(1).padStart(6)} ms  RSS ${`${grow < 0 ? '' : '+'}${grow.toFixed(0)}`.padStart(5)} MB  ` +
      `webhook ${rate(genuine.webhook).padEnd(10)} smtp ${rate(genuine.smtp).padEnd(10)} ${ok}`,
  );
}

async function waitDelivered(port: number, id: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/api/items/${id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    if (res.ok && ((await res.json()) as { item: { state: string } }).item.state !== 'queued') return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const repeat = (count: number, fn: (i: number) => Promise<unknown>) => Promise.all(Array.from({ length: count }, (_, i) => fn(i)));

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-attack-'));
  const ports: Ports = { http: await freePort(), smtp: await freePort() };
  writeFileSync(
    join(dir, 'mailgate.yaml'),
    [
      `store: sqlite:${join(dir, 'mailgate.db')}`,
      `server: { listen: 127.0.0.1:${ports.http}, api_keys: [${ADMIN_KEY}] }`,
      'log_level: error',
      'routes: [{ name: in, source: bench/in }]',
      'adapters:',
      '  webhooks:',
      '    - { name: mailgun-in, provider: mailgun, route: in, signing_key: key-bench-0123456789abcdef }',
      `    - { name: worker-in, provider: raw, route: in, bearer_keys: [${BEARER}] }`,
      `  upload: [{ name: desk, route: in, api_keys: [${UPLOAD_KEY}] }]`,
      `  smtp: [{ name: mx, route: in, listen: "127.0.0.1:${ports.smtp}", recipients: [{ match: "*" }], max_connections: 20 }]`,
      '',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [CLI, 'serve', '--config', join(dir, 'mailgate.yaml')], { cwd: dir, stdio: 'ignore' });
  try {
    while ((await http(ports.http, '/livez')) !== 200) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1000));
    console.log(
      `bench:attack — ${SECONDS} s per attack; targets: /livez p99 < ${TARGET.p99} ms, max < ${TARGET.max} ms, RSS growth < ${TARGET.rssMb} MB`,
    );
    console.log(`load average at start ${load()} (a shared machine's other work shows in every figure)`);
    const html = Buffer.from(
      mail('entities', '').replace('\r\n\r\n', '\r\nContent-Type: text/html\r\n\r\n') + `<p>${'&amp;'.repeat(2 * MIB)}</p>\r\n`,
    );
    const stored = await fetch(`http://127.0.0.1:${ports.http}/api/upload/desk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${UPLOAD_KEY}`, 'content-type': 'message/rfc822' },
      body: new Uint8Array(html),
    });
    const itemId = ((await stored.json()) as { results: Array<{ item: string }> }).results[0]!.item;
    await waitDelivered(ports.http, itemId);
    const base = rssMb(child.pid!);
    console.log(`serve RSS at rest ${base.toFixed(0)} MB (after storing and delivering the 10 MB HTML item)\n`);
    await measure('baseline (no attack)', ports, child.pid!, base, async () => undefined);

    // 1. Unsigned Mailgun multipart with 10,000 tiny fields (the per-field rescan).
    const fields = Array.from(
      { length: 10_000 },
      (_, i) => `--b\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\n${'x'.repeat(3000)}\r\n`,
    );
    const form = Buffer.from(`${fields.join('')}--b--\r\n`);
    const formHead = `POST /webhooks/mailgun-in HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${form.length}\r\n\r\n`;
    await measure('mailgun 10k fields', ports, child.pid!, base, (deadline) =>
      repeat(4, async () => {
        while (Date.now() < deadline) await flood(ports.http, formHead, form, deadline);
      }),
    );

    // 2. Unauthenticated 39 MB uploads and unsigned 39 MB Mailgun bodies, 60 and 30 connections.
    const big = Buffer.alloc(39 * MIB, 0x61);
    const uploadHead = `POST /api/upload/desk HTTP/1.1\r\nHost: x\r\nContent-Type: application/mbox\r\nContent-Length: ${big.length}\r\n\r\n`;
    await measure('upload 60 x 39 MB, no key', ports, child.pid!, base, (deadline) =>
      repeat(60, () => flood(ports.http, uploadHead, big, deadline)),
    );
    const mgHead = `POST /webhooks/mailgun-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${big.length}\r\n\r\n`;
    await measure('mailgun 30 x 39 MB', ports, child.pid!, base, (deadline) => repeat(30, () => flood(ports.http, mgHead, big, deadline)));

    // 3. An authenticated mbox of ~900,000 tiny messages (413 at max_messages).
    const mbox = Buffer.from('From a@b Mon Jan  1 00:00:00 2024\n\n'.repeat(900_000));
    await measure('mbox 900k messages', ports, child.pid!, base, async (deadline) => {
      while (Date.now() < deadline) {
        await http(ports.http, '/api/upload/desk', {
          method: 'POST',
          headers: { authorization: `Bearer ${UPLOAD_KEY}`, 'content-type': 'application/mbox' },
          body: mbox,
        });
      }
    });

    // 4. Opening an item whose HTML body is 10 MB of `&amp;` (stored and delivered before the first measure).
    await measure('console item 10 MB &', ports, child.pid!, base, (deadline) =>
      repeat(2, async () => {
        while (Date.now() < deadline) await http(ports.http, `/api/items/${itemId}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      }),
    );

    // 5. SMTP slow-loris: 40 connections from 127.0.0.1 dripping a byte a second during DATA.
    await measure('smtp slow-loris x 40', ports, child.pid!, base, (deadline) =>
      repeat(40, async () => {
        const s: Socket = connect({ port: ports.smtp, host: '127.0.0.1' });
        s.on('error', () => undefined);
        s.write('EHLO loris\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nDATA\r\n');
        const drip = setInterval(() => s.write('x'), 1000);
        await new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())));
        clearInterval(drip);
        s.destroy();
      }),
    );
    console.log(`\nload average at end ${load()}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
