/**
 * `npm run bench:soak`: does a long-running `mailgate serve` stay flat? One spawned service
 * (SQLite store in a temporary directory, short retention) with 50 IMAP mailboxes receiving mail
 * (a throw-away Dovecot), signed webhooks and SMTP traffic, a sync route and a predict route (a
 * JSONL sink), against the emulator in this process failing now and then (503s, answers lost
 * after the work was done). Every 10 s it samples the service's RSS, heap used, open file
 * descriptors, active handles and event-loop delay p99 (its /metrics) and the store's size on
 * disk; at the end it prints each one's slope after the warm-up with its standard error, and the
 * totals: sent, delivered, billed, billed twice, lost.
 *
 *   node dist/bench/soak.js [--minutes 30] [--warmup-minutes 5] [--imap-rate 2] [--webhook-rate 2] [--smtp-rate 1]
 *                           [--snapshot-minutes M]
 *
 * `--snapshot-minutes M` has the service write a V8 heap snapshot every M minutes after the warm-up
 * (into a directory that is kept and printed); `node dist/bench/support/heap-diff.js A B` then lists
 * what grew between two of them, by constructor.
 *
 * "heap used" counts the young generation too, which V8 grows with the allocation rate (up to
 * 2 × 16–64 MiB): its floor rises over a run without anything being retained. "heap after full GC"
 * is the heap each mark-compact of the main thread leaves (the service runs with `--trace-gc`):
 * what is live.
 *
 * Rates are messages per second of each kind. The machine's load average is printed with each
 * sample: other work on the machine moves the figures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ImapFlow } from 'imapflow';
import { simulator } from '../adapters/index.js';
import { buildEmulatorApp } from '../src/emulator/app.js';
import { FaultPlan } from '../src/emulator/faults.js';
import { resolveOptions } from '../src/emulator/options.js';
import { EmulatorState } from '../src/emulator/state.js';
import { startBenchDovecot, type BenchDovecot } from './support/dovecot.js';
import { slope, type Sample, SERIES } from './support/slope.js';
import { SmtpSender } from './support/smtp-sender.js';

const CLI = fileURLToPath(new URL('../cli/mailgate.js', import.meta.url));
const ADMIN = `soak-admin-${randomBytes(8).toString('hex')}`;
const SECRET = randomBytes(24).toString('hex');
const MAILBOXES = 50;
const SAMPLE_MS = 10_000;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}

const MINUTES = arg('minutes', 30);
const WARMUP_MINUTES = arg('warmup-minutes', Math.min(5, MINUTES / 6));
const SNAPSHOT_MINUTES = process.argv.includes('--snapshot-minutes') ? arg('snapshot-minutes', 5) : null;
const RATES = { imap: arg('imap-rate', 2), webhook: arg('webhook-rate', 2), smtp: arg('smtp-rate', 1) };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const hexId = (tag: string) => Buffer.from(`<${tag}@soak.example>`, 'utf8').toString('hex');

function message(tag: string, kind: string): Buffer {
  return Buffer.from(
    [
      `From: Customer ${kind} <customer-${tag.slice(-3)}@example.com>`,
      'To: support@acme.example',
      `Subject: ${kind} order ${tag}`,
      `Message-ID: <${tag}@soak.example>`,
      'Date: Mon, 02 Mar 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Hello, where is order ${tag}? `.repeat(20),
      '',
    ].join('\r\n'),
  );
}

/** The emulator in this process: comment ids as they are stored, AI units, and faults now and then. */
async function startEmu() {
  const token = randomBytes(8).toString('hex');
  const state = new EmulatorState();
  const stored = new Set<string>();
  let syncUnits = 0;
  let predictUnits = 0;
  const commit = state.commit.bind(state);
  state.commit = (op) => {
    commit(op);
    if (op.op === 'comments') {
      syncUnits += op.units;
      for (const c of op.comments) stored.add(c.id);
    }
    if (op.op === 'bill') predictUnits += op.units;
  };
  const faults = new FaultPlan([]);
  const app = buildEmulatorApp(state, resolveOptions({ token, autoCreateSources: true, logger: false }), faults);
  const address = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
  const url = `${address.protocol}//${address.host}`;
  const res = await fetch(`${url}/api/v1/datasets/soak/triage`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{"dataset":{}}',
  });
  if (!res.ok) throw new Error(`cannot create the dataset: HTTP ${res.status} ${await res.text()}`);
  // From now on the API fails now and then: 503s, answers lost after the work was done, slow answers.
  faults.set([
    { status: 503, rate: 0.03, seed: 7, retry_after: 1 },
    { drop_after_apply: true, rate: 0.01, seed: 11 },
    { delay_ms: 1500, rate: 0.02, seed: 13 },
  ]);
  return { url, token, stored, units: () => ({ sync: syncUnits, predict: predictUnits }), close: () => app.close() };
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

function config(dir: string, emu: { url: string; token: string }, d: BenchDovecot, smtpPort: number): string {
  const lines = [
    `store: sqlite:${join(dir, 'mailgate.db')}`,
    `api: { url: ${emu.url}, token: "${emu.token}", retry: { base_delay_ms: 200, max_delay_ms: 2000 } }`,
    `server: { listen: 127.0.0.1:0, api_keys: ["${ADMIN}"] }`,
    'log_level: warn',
    'log_format: json',
    'retention: { delivered_s: 120, predictions_s: 120, dead_s: 600, interval_s: 30 }',
    'routes:',
    '  - { name: mail, source: soak/inbox }',
    `  - { name: triage, mode: predict, dataset: soak/triage, sink: { jsonl: ${join(dir, 'predictions.jsonl')} } }`,
    'adapters:',
    '  webhooks:',
    `    - { name: raw-in, provider: raw, route: mail, hmac_secret: ${SECRET} }`,
    '  smtp:',
    `    - { name: mx, route: triage, listen: 127.0.0.1:${smtpPort}, recipients: [{ match: "*" }] }`,
    '  imap:',
  ];
  for (let i = 0; i < MAILBOXES; i++)
    lines.push(
      `    - { name: mb${i}, route: mail, host: ${d.host}, port: ${d.port}, secure: false, auth: { user: mb${i}, pass: pw${i} }, folders: [INBOX] }`,
    );
  const file = join(dir, 'mailgate.yaml');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** `--trace-gc`'s line for a full collection: "Mark-Compact 52.3 (60.1) -> 45.7 (58.4) MB". */
const MARK_COMPACT = /\[\d+:(0x[0-9a-f]+)\][^\n]*?Mark-Compact(?: \([a-z ]+\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \(/g;

interface Serve {
  child: ChildProcess;
  url: string;
  log: () => string;
  /** The heap the last full GC left since the previous call, in MiB (NaN: none). */
  takeLive: () => number;
}

async function startServe(file: string, dir: string, snapshots: string | null): Promise<Serve> {
  const flags = ['--trace-gc', ...(snapshots === null ? [] : ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`])];
  const child = spawn(process.execPath, [...flags, CLI, 'serve', '--config', file], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  // Parse workers are isolates of their own and print their collections too (heaps of a few
  // MiB): the service's main isolate is the one with the largest heap after a full GC.
  let live = NaN;
  let main: { isolate: string; mib: number } | undefined;
  const keep = (b: Buffer) => {
    const text = b.toString();
    for (const m of text.matchAll(MARK_COMPACT)) {
      const mib = Number(m[2]);
      if (main === undefined || (m[1] !== main.isolate && mib > main.mib)) main = { isolate: m[1]!, mib };
      if (m[1] === main.isolate) live = main.mib = mib;
    }
    out += text;
    if (out.length > 1_000_000) out = out.slice(-500_000);
  };
  const takeLive = () => {
    const v = live;
    live = NaN;
    return v;
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  for (;;) {
    const m = /serving on (http:\/\/\S+)/.exec(out);
    if (m) return { child, url: m[1]!, log: () => out, takeLive };
    if (child.exitCode !== null) throw new Error(`mailgate serve exited with ${child.exitCode}: ${out}`);
    await sleep(50);
  }
}

/** The service's own gauges from /metrics (prom-client's default metrics). */
async function scrape(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const get = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? NaN);
  return {
    rss: get('process_resident_memory_bytes') / 1024 / 1024,
    heap: get('nodejs_heap_size_used_bytes') / 1024 / 1024,
    fds: get('process_open_fds'),
    handles: get('nodejs_active_handles_total'),
    eld: get('nodejs_eventloop_lag_p99_seconds') * 1000,
  };
}

const storeMiB = (dir: string) => {
  const size = (p: string) => statSync(p, { throwIfNoEntry: false })?.size ?? 0;
  return (size(join(dir, 'mailgate.db')) + size(join(dir, 'mailgate.db-wal'))) / 1024 / 1024;
};

/** Calls `send` `rate` times a second (spread evenly) until `stop`; counts what the sender acknowledged. */
async function pace(rate: number, stop: AbortSignal, send: (n: number) => Promise<boolean>, counts: { sent: number; refused: number }) {
  const t0 = performance.now();
  const inFlight = new Set<Promise<void>>();
  for (let n = 0; !stop.aborted; n++) {
    const due = t0 + (n * 1000) / rate;
    if (due > performance.now()) await sleep(due - performance.now());
    if (inFlight.size > 50) await Promise.race(inFlight);
    const p = send(n).then(
      (ok) => void (ok ? (counts.sent += 1) : (counts.refused += 1)),
      () => void (counts.refused += 1),
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }
  await Promise.all(inFlight);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-soak-'));
  const d = await startBenchDovecot({ connections: 256 });
  const emu = await startEmu();
  const smtpPort = await freePort();
  d.addUsers(Array.from({ length: MAILBOXES }, (_, i) => ({ user: `mb${i}`, pass: `pw${i}` })));
  const snapshots = SNAPSHOT_MINUTES === null ? null : mkdtempSync(join(tmpdir(), 'mailgate-soak-heap-'));
  const serve = await startServe(config(dir, emu, d, smtpPort), dir, snapshots);
  if (snapshots !== null) console.log(`heap snapshots every ${SNAPSHOT_MINUTES} min after the warm-up go to ${snapshots}`);
  console.log(
    `soak: ${MINUTES} min (warm-up ${WARMUP_MINUTES} min), ${MAILBOXES} IMAP mailboxes at ${RATES.imap}/s, webhooks ${RATES.webhook}/s, ` +
      `SMTP ${RATES.smtp}/s (predict route); node ${process.version}; load average ${load()} at start`,
  );
  const sent = { imap: new Set<string>(), webhook: new Set<string>(), smtp: new Set<string>() };
  const counts = { imap: { sent: 0, refused: 0 }, webhook: { sent: 0, refused: 0 }, smtp: { sent: 0, refused: 0 } };
  const clients = await Promise.all(
    Array.from({ length: MAILBOXES }, async (_, i) => {
      const c = new ImapFlow({ host: d.host, port: d.port, secure: false, auth: { user: `mb${i}`, pass: `pw${i}` }, logger: false });
      c.on('error', () => undefined);
      await c.connect();
      return c;
    }),
  );
  const { simulator: sim } = await simulator();
  const hook = sim.entryFromSecrets('raw', { hmacSecret: SECRET }, serve.url);
  const smtp = new SmtpSender(smtpPort);
  const stop = new AbortController();
  const run = randomBytes(3).toString('hex');
  const traffic = Promise.all([
    pace(
      RATES.imap,
      stop.signal,
      async (n) => {
        const tag = `imap-${run}-${n}`;
        await clients[n % MAILBOXES]!.append('INBOX', message(tag, 'imap'));
        sent.imap.add(hexId(tag));
        return true;
      },
      counts.imap,
    ),
    pace(
      RATES.webhook,
      stop.signal,
      async (n) => {
        const tag = `hook-${run}-${n}`;
        const req = sim.request(hook, message(tag, 'webhook'), { url: '/webhooks/raw-in', now: Date.now() });
        const res = await fetch(`${serve.url}/webhooks/raw-in`, { method: 'POST', headers: req.headers, body: new Uint8Array(req.body) });
        await res.arrayBuffer();
        if (res.ok) sent.webhook.add(hexId(tag));
        return res.ok;
      },
      counts.webhook,
    ),
    pace(
      RATES.smtp,
      stop.signal,
      async (n) => {
        const tag = `smtp-${run}-${n}`;
        const ok = await smtp.send(message(tag, 'smtp'));
        if (ok) sent.smtp.add(hexId(tag));
        return ok;
      },
      counts.smtp,
    ),
  ]);

  const samples: Sample[] = [];
  const t0 = performance.now();
  const end = t0 + MINUTES * 60_000;
  let nextSnapshot = WARMUP_MINUTES * 60_000;
  while (performance.now() < end) {
    await sleep(Math.min(SAMPLE_MS, end - performance.now()));
    if (serve.child.exitCode !== null) throw new Error(`mailgate serve exited: ${serve.log().slice(-3000)}`);
    const m = await scrape(serve.url);
    const s: Sample = { t: (performance.now() - t0) / 1000, ...m, live: serve.takeLive(), store: storeMiB(dir) } as Sample;
    samples.push(s);
    console.log(
      `${(s.t / 60).toFixed(1).padStart(5)} min  RSS ${s.rss.toFixed(1)} MiB  heap ${s.heap.toFixed(1)} MiB  after full GC ${Number.isNaN(s.live) ? '-' : s.live.toFixed(1)} MiB  fds ${s.fds}  handles ${s.handles}  ` +
        `ELD p99 ${s.eld.toFixed(1)} ms  store ${s.store.toFixed(2)} MiB  sent ${counts.imap.sent + counts.webhook.sent + counts.smtp.sent}  ` +
        `delivered ${emu.stored.size}  load ${load()}`,
    );
    if (SNAPSHOT_MINUTES !== null && performance.now() - t0 >= nextSnapshot) {
      serve.child.kill('SIGUSR2');
      nextSnapshot += SNAPSHOT_MINUTES * 60_000;
    }
  }
  stop.abort();
  await traffic;
  // Everything acknowledged must arrive: wait for it (retries, faults), then stop the service.
  const predicted = () => {
    const text = readFileSync(join(dir, 'predictions.jsonl'), { encoding: 'utf8', flag: 'a+' });
    return new Set(text.split('\n').flatMap((l) => (l.trim() === '' ? [] : [(JSON.parse(l) as { comment_id: string }).comment_id])));
  };
  const missing = () => {
    const p = predicted();
    return {
      imap: [...sent.imap].filter((id) => !emu.stored.has(id)).length,
      webhook: [...sent.webhook].filter((id) => !emu.stored.has(id)).length,
      smtp: [...sent.smtp].filter((id) => !p.has(id)).length,
    };
  };
  const settleUntil = performance.now() + 180_000;
  while (performance.now() < settleUntil) {
    const m = missing();
    if (m.imap + m.webhook + m.smtp === 0) break;
    await sleep(1000);
  }
  const lost = missing();
  const exited = new Promise((r) => serve.child.once('exit', r));
  serve.child.kill('SIGTERM');
  await exited;
  for (const c of clients) await c.logout().catch(() => c.close());
  smtp.close();

  const after = samples.filter((s) => s.t >= WARMUP_MINUTES * 60);
  console.log(`\nslopes after the ${WARMUP_MINUTES}-min warm-up (${after.length} samples, least squares, ± one standard error):`);
  for (const [key, label, unit] of SERIES) {
    const r = slope(after, key);
    // Fewer than three samples with a value (a short run, or no full GC after the warm-up) give no slope.
    const flat = Number.isNaN(r.perHour)
      ? 'too few samples for a slope'
      : Math.abs(r.perHour) <= 2 * r.se
        ? 'within 2 SE of zero'
        : 'NOT within 2 SE of zero';
    console.log(
      `  ${label.padEnd(22)} ${r.perHour.toFixed(3).padStart(9)} ± ${r.se.toFixed(3)} ${unit}/h  (${flat}; first ${r.first.toFixed(2)}, last ${r.last.toFixed(2)} ${unit})`,
    );
  }
  const units = emu.units();
  const syncSent = sent.imap.size + sent.webhook.size;
  const syncDelivered = [...sent.imap, ...sent.webhook].filter((id) => emu.stored.has(id)).length;
  console.log('\ntotals:');
  console.log(
    `  sent (acknowledged): IMAP ${counts.imap.sent}, webhooks ${counts.webhook.sent}, SMTP ${counts.smtp.sent}; ` +
      `refused with a retryable answer: webhooks ${counts.webhook.refused}, SMTP ${counts.smtp.refused}, IMAP APPEND failures ${counts.imap.refused}`,
  );
  console.log(`  delivered: sync ${syncDelivered} of ${syncSent}, predicted ${sent.smtp.size - lost.smtp} of ${sent.smtp.size}`);
  console.log(
    `  billed: sync ${units.sync} AI units for ${emu.stored.size} comments (billed twice: ${units.sync - emu.stored.size}); ` +
      `predict ${units.predict} units for ${sent.smtp.size - lost.smtp} documents (a predict call is billed each time it is answered, retries included)`,
  );
  console.log(`  lost: ${lost.imap + lost.webhook + lost.smtp} (IMAP ${lost.imap}, webhooks ${lost.webhook}, SMTP ${lost.smtp})`);
  console.log(`  load average at the end: ${load()}`);
  const warns = serve
    .log()
    .split('\n')
    .filter((l) => /"level":(40|50|60)/.test(l));
  console.log(`  service warnings/errors logged: ${warns.length}${warns.length ? `; last: ${warns.at(-1)!.slice(0, 300)}` : ''}`);
  await emu.close();
  await d.stop();
  rmSync(dir, { recursive: true, force: true });
}

await main();
