/**
 * New mail on an idle mailbox (`bench:imap --mailboxes new-mail`): one message at a time is
 * appended to a mailbox `mailgate serve` is idling on, and the time from the server's OK to the
 * APPEND until the API holds the comment is taken for each; beside it, the floor: the same
 * appends seen by a bare imapflow client idling on the mailbox, from the APPEND's OK until the
 * server's EXISTS reaches it. Each append waits for the previous message to arrive, then a
 * random pause (0–2.5 s, `--append-pause-ms`), so that appends land at every point of the service's idle cycle
 * (right after a sync, around the settling NOOP, long after).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';
import { buildEmulatorApp } from '../../src/emulator/app.js';
import { FaultPlan } from '../../src/emulator/faults.js';
import { resolveOptions } from '../../src/emulator/options.js';
import { EmulatorState } from '../../src/emulator/state.js';
import type { BenchDovecot } from './dovecot.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function client(d: BenchDovecot, user: string, disableAutoIdle = false): Promise<ImapFlow> {
  for (let attempt = 0; ; attempt++) {
    const c = new ImapFlow({
      host: d.host,
      port: d.port,
      secure: false,
      auth: { user, pass: `pw-${user}` },
      logger: false,
      disableAutoIdle,
    });
    c.on('error', () => undefined);
    try {
      await c.connect();
      return c;
    } catch (err) {
      if (attempt > 40) throw err;
      await sleep(100); // the passwd-file is re-read at most once a second
    }
  }
}

function message(tag: string): Buffer {
  return Buffer.from(
    [
      'From: Customer <customer@example.com>',
      'To: support@example.org',
      `Subject: Order ${tag}`,
      `Message-ID: <${tag}@bench.example>`,
      'Date: Mon, 02 Mar 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Hello, where is order ${tag}?`,
      '',
    ].join('\r\n'),
  );
}

let maxPauseMs = 2500;
const pause = () => sleep(Math.random() * maxPauseMs);

/** ms from each APPEND's OK until a bare imapflow client idling on INBOX is told EXISTS. */
async function floor(d: BenchDovecot, user: string, n: number): Promise<number[]> {
  const idler = await client(d, user, true);
  const appender = await client(d, user);
  const out: number[] = [];
  try {
    await idler.mailboxOpen('INBOX');
    let seen: ((at: number) => void) | undefined;
    idler.on('exists', () => seen?.(performance.now()));
    for (let i = 0; i < n; i++) {
      const idling = idler.idle();
      await pause();
      const arrived = new Promise<number>((r) => (seen = r));
      await appender.append('INBOX', message(`floor-${i}-${randomBytes(4).toString('hex')}`));
      const ok = performance.now();
      out.push((await arrived) - ok);
      seen = undefined;
      await idler.noop(); // ends this IDLE (a command breaks it)
      await idling;
    }
  } finally {
    await idler.logout().catch(() => idler.close());
    await appender.logout().catch(() => appender.close());
  }
  return out;
}

/** ms from each APPEND's OK until the emulator stores the comment, through `mailgate serve` (`cli`). */
async function throughMailgate(d: BenchDovecot, user: string, n: number, cli: string): Promise<number[]> {
  const token = randomBytes(8).toString('hex');
  const state = new EmulatorState();
  const stored = new Map<string, number>();
  const commit = state.commit.bind(state);
  state.commit = (op) => {
    commit(op);
    if (op.op === 'comments') for (const c of op.comments) if (!stored.has(c.id)) stored.set(c.id, performance.now());
  };
  const app = buildEmulatorApp(state, resolveOptions({ token, autoCreateSources: true, logger: false }), new FaultPlan([]));
  const address = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-new-mail-'));
  writeFileSync(
    join(dir, 'mailgate.yaml'),
    [
      `store: sqlite:${join(dir, 'mailgate.db')}`,
      `api: { url: "${address.protocol}//${address.host}", token: "${token}" }`,
      'server: { listen: 127.0.0.1:0 }',
      'log_level: warn',
      'routes: [{ name: bench, source: bench/inbox }]',
      `adapters: { imap: [{ name: bench, route: bench, host: ${d.host}, port: ${d.port}, secure: false, auth: { user: ${user}, pass: pw-${user} }, folders: [INBOX] }] }`,
      '',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [cli, 'serve', '--config', join(dir, 'mailgate.yaml')], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const appender = await client(d, user);
  const out: number[] = [];
  const arrival = async (id: string) => {
    const until = performance.now() + 30_000;
    while (!stored.has(id)) {
      if (child.exitCode !== null) throw new Error(`mailgate serve exited with ${child.exitCode}: ${err}`);
      if (performance.now() > until) throw new Error(`a message did not reach the API within 30 s: ${err.slice(-2000)}`);
      await sleep(2);
    }
    return stored.get(id)!;
  };
  try {
    // The first message proves the service connected and synced; it is not counted.
    for (let i = -1; i < n; i++) {
      const tag = `new-${i}-${randomBytes(4).toString('hex')}`;
      await appender.append('INBOX', message(tag));
      const ok = performance.now();
      const at = await arrival(Buffer.from(`<${tag}@bench.example>`, 'utf8').toString('hex'));
      if (i >= 0) out.push(at - ok);
      await pause();
    }
  } finally {
    await appender.logout().catch(() => appender.close());
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

function line(what: string, xs: number[]): string {
  const f = (v: number) => v.toFixed(0).padStart(6);
  return `  ${what.padEnd(44)} p50 ${f(pct(xs, 50))} ms  p90 ${f(pct(xs, 90))} ms  p99 ${f(pct(xs, 99))} ms  max ${f(Math.max(...xs))} ms`;
}

/**
 * mailgate's share beside the floor's: the target is judged on mailgate's own figure, but when the
 * floor (the server announcing the mail to any IDLE client) is already over the target, no IDLE
 * client can meet it, and what is left to prove is the time mailgate adds to the floor.
 */
function verdict(bare: number[], ours: number[]): string {
  const added = (p: number) => (pct(ours, p) - pct(bare, p)).toFixed(0);
  const met = pct(ours, 50) <= 500 && pct(ours, 99) <= 1000;
  const out = [
    `  mailgate adds to the floor: p50 ${added(50)} ms, p90 ${added(90)} ms, p99 ${added(99)} ms; target ${met ? 'met' : 'not met'}`,
  ];
  if (pct(bare, 50) > 500)
    out.push(
      `; the floor's own p50 (${pct(bare, 50).toFixed(0)} ms) is over 500 ms: the server announces new mail that late to any IDLE client, so p50 ≤ 500 ms is out of reach through IDLE here`,
    );
  return out.join('');
}

/** Prints the distributions of the floor and of mailgate (and of `vsCli`, another build, when given). */
export async function benchNewMail(d: BenchDovecot, appends: number, pauseMs: number, cli: string, vsCli?: string): Promise<void> {
  maxPauseMs = pauseMs;
  d.addUser('newmail', 'pw-newmail');
  d.addUser('newfloor', 'pw-newfloor');
  console.log(`new mail on an idle mailbox: ${appends} appends one at a time, 0–${pauseMs} ms apart, APPEND's OK → …`);
  const bare = await floor(d, 'newfloor', appends);
  console.log(line('EXISTS at a bare imapflow IDLE client (floor)', bare));
  const ours = await throughMailgate(d, 'newmail', appends, cli);
  console.log(line('comment stored by the API, mailgate serve', ours) + '   target p50 ≤ 500 ms, p99 ≤ 1000 ms');
  console.log(verdict(bare, ours));
  if (vsCli !== undefined) {
    d.addUser('newvs', 'pw-newvs');
    console.log(line(`comment stored, ${vsCli}`, await throughMailgate(d, 'newvs', appends, vsCli)));
  }
}
