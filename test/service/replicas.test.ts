/**
 * Scale-out proof: three `mailgate serve` processes (the built CLI) on one PostgreSQL, reading
 * 30 Dovecot mailboxes that receive mail throughout, delivering into one emulator. One replica
 * is killed with SIGKILL, one is paused with SIGSTOP past its lease and continued, then all three
 * are restarted one by one with SIGTERM. All along, a monitor samples every replica's
 * `/api/status` and Dovecot's open connections: no mailbox is ever read by two live replicas,
 * and a mailbox never has two IMAP connections except while the paused replica's frozen ones
 * linger. At the end every message is created exactly once and billed once (emulator counters),
 * none is lost (each folder's checkpoint is its last UID), and the mailboxes of a dead replica
 * were served again within the lease TTL + 5 s.
 *
 * On a loaded machine every step is slow: the steps wait as long as they make progress
 * (replicas-waits.ts), mail arrives paced by delivery (a slow run gets no more mail than a quick
 * one), and a replica that does not stop fails the test with its log instead of outlasting it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textMessage } from '../imap/messages.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { createTestDatabase } from '../support/postgres.js';
import { ADMIN_KEY } from './imap-serve-setup.js';
import { stopGracefully, untilReached, within } from './replicas-waits.js';
import { killLeftovers, spawnServe, type ServeProcess } from './serve-process.js';

const MAILBOXES = 30;
const PREFILLED = 3;
const TTL_MS = 6_000;
const PASS = 'pw-replicas';
/** Messages generated and not yet at the API, at most: the generator waits for delivery beyond it. */
const BACKLOG = 10;

let dovecot: DovecotServer;
let emu: StartedEmulator;
let dir: string;
let storeUrl: string;
const users = Array.from({ length: MAILBOXES }, (_, i) => `rep${process.pid}x${i}`);
/** Messages put into each mailbox so far. */
const sent = new Map<string, number>();
let seq = 0;
const message = (user: string): string => textMessage(++seq, `replicas ${user} ${seq}`);

beforeAll(async () => {
  dovecot = await startDovecot();
  emu = await startEmulator({ autoCreateSources: true });
  storeUrl = await createTestDatabase('mailgate_replicas');
  dir = mkdtempSync(join(tmpdir(), 'mailgate-replicas-'));
  await Promise.all(users.map((u) => dovecot.addUser(u, PASS)));
  for (const u of users) {
    dovecot.fillMaildir(
      u,
      'INBOX',
      Array.from({ length: PREFILLED }, () => message(u)),
    );
    sent.set(u, PREFILLED);
  }
  const accounts = users.map(
    (u) =>
      `    - { name: ${u}, route: support, host: ${dovecot.host}, port: ${dovecot.port}, secure: false, auth: { user: ${u}, pass: "\${TEST_IMAP_PASS}" } }`,
  );
  writeFileSync(
    join(dir, 'mailgate.yaml'),
    [
      `store: ${storeUrl}`,
      `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}", retry: { base_delay_ms: 50, max_delay_ms: 200 } }`,
      `server: { listen: 127.0.0.1:0, api_keys: ["\${TEST_ADMIN_KEY}"] }`,
      'log_level: info',
      'parsing: { workers: 1 }',
      'delivery: { max_documents: 100, flush_ms: 50, heartbeat_ms: 1000, drain_ms: 5000 }',
      `leases: { ttl_ms: ${TTL_MS}, renew_ms: 500 }`,
      'routes:',
      '  - { name: support, source: acme/support }',
      'adapters:',
      '  imap:',
      ...accounts,
      '',
    ].join('\n'),
  );
}, 120_000);

afterAll(async () => {
  killLeftovers();
  await emu?.stop();
  await dovecot?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Replica {
  name: string;
  serve: ServeProcess;
  url: string;
  /** Paused with SIGSTOP: its status cannot be read, its IMAP connections are frozen. */
  paused: boolean;
}

/** Every replica started, for the diagnostics of a failure. */
const everyReplica: Replica[] = [];

async function startReplica(name: string): Promise<Replica> {
  const serve = spawnServe(['--config', join(dir, 'mailgate.yaml')], {
    cwd: dir,
    env: { TEST_API_TOKEN: emu.token, TEST_ADMIN_KEY: ADMIN_KEY, TEST_IMAP_PASS: PASS },
  });
  const replica = { name, serve, url: await serve.url, paused: false };
  everyReplica.push(replica);
  return replica;
}

/** Account name → state, of every IMAP account of one replica (`standby`: another replica reads it). */
async function accountStates(r: Replica): Promise<Map<string, string> | undefined> {
  try {
    const res = await fetch(`${r.url}/api/status`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      signal: AbortSignal.timeout(2_000),
    });
    const body = (await res.json()) as { adapters: Array<{ kind: string; name: string; state: string }> };
    return new Map(body.adapters.filter((a) => a.kind === 'imap').map((a) => [a.name, a.state]));
  } catch {
    return undefined;
  }
}

const reading = (state: string | undefined): boolean => state !== undefined && state !== 'standby' && state !== 'stopped';

/** Accounts in one of these states on some live replica. */
async function accountsIn(replicas: Replica[], states: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const r of replicas.filter((x) => !x.paused)) {
    for (const [name, state] of (await accountStates(r)) ?? []) if (states.includes(state)) found.add(name);
  }
  return found;
}

/** Each replica's lease events and its last lines, for the diagnostics of a failure. */
function replicaLogs(): string {
  const events = /lease|replicas share|released \d+ claims|signal|stopp/;
  return everyReplica
    .map((r) => {
      const lines = r.serve
        .stdout()
        .split('\n')
        .filter((l) => events.test(l));
      const last = (r.serve.stderr() + r.serve.stdout()).trimEnd().split('\n').slice(-5);
      return `--- ${r.name}\n${lines.slice(-60).join('\n')}\n(last lines)\n${last.join('\n')}`;
    })
    .join('\n');
}

describe('three mailgate serve replicas on one PostgreSQL', () => {
  it('each mailbox read by one live replica; SIGKILL, SIGSTOP and rolling restarts lose nothing and bill once', async () => {
    const replicas: Replica[] = [];
    for (const name of ['r1', 'r2', 'r3']) replicas.push(await startReplica(name));
    const violations: string[] = [];
    let frozenUntil = 0;
    let monitoring = true;
    let twoBefore = new Set<string>();
    let sharedBefore = new Set<string>();
    const total = (): number => [...sent.values()].reduce((a, b) => a + b, 0);
    const monitor = (async () => {
      while (monitoring) {
        const live = replicas.filter((r) => !r.paused && r.serve.child.exitCode === null && r.serve.child.signalCode === null);
        // The replicas answer a moment apart: a mailbox handed over between two answers shows on
        // both once, so only one seen on two replicas in two samples in a row counts.
        const states = await Promise.all(live.map(accountStates));
        const shared = new Set<string>();
        for (const u of users) {
          const readers = live.filter((_, i) => reading(states[i]?.get(u)));
          if (readers.length < 2) continue;
          const key = `${u} read by ${readers.map((r) => r.name).join(' and ')}`;
          if (sharedBefore.has(key)) violations.push(key);
          shared.add(key);
        }
        sharedBefore = shared;
        // Dovecot's side: one connection per mailbox; a LOGOUT being torn down may show for one sample.
        const conns = await dovecot.connections();
        const two = new Set(users.filter((u) => (conns.get(u) ?? 0) > 1));
        if (Date.now() > frozenUntil) {
          for (const u of two) if (twoBefore.has(u)) violations.push(`${u} has ${conns.get(u)} IMAP connections`);
        }
        for (const u of users) if ((conns.get(u) ?? 0) > 2) violations.push(`${u} has ${conns.get(u)} IMAP connections`);
        twoBefore = two;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    let generating = true;
    const generator = (async () => {
      while (generating) {
        if (total() - emu.emulator.stats().comments >= BACKLOG) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        const u = users[Math.floor(Math.random() * users.length)]!;
        sent.set(u, sent.get(u)! + 1);
        await dovecot.deliver(u, 'INBOX', message(u));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const idle = async (): Promise<number> => (await accountsIn(replicas, ['idle'])).size;
    const untilAllIdle = (what: string) => untilReached(idle, MAILBOXES, what, replicaLogs);
    // Served: connected and reading (idling, or syncing the mail that keeps arriving).
    const allServed = async (): Promise<boolean> => (await accountsIn(replicas, ['idle', 'syncing'])).size === MAILBOXES;

    // Each phase's start, with the time since the test began: a slow run names its slow phase.
    const began = Date.now();
    const step = (name: string): void => console.log(`replicas test: ${name} at +${Date.now() - began} ms`);
    try {
      step('start');
      await untilAllIdle(`all ${MAILBOXES} mailboxes idling`);
      // Every replica reads its share. A replica that registered after the others first found every
      // lease taken: the hand-over to it takes a few lease checks, so its share may still be coming.
      const shares = async (): Promise<number[]> =>
        Promise.all(replicas.map(async (r) => [...((await accountStates(r)) ?? new Map()).values()].filter(reading).length));
      const sharing = async (): Promise<number> => (await shares()).filter((s) => s > 0).length;
      await untilReached(sharing, replicas.length, 'a share of the mailboxes on every replica', replicaLogs);

      // 1. SIGKILL: its mailboxes are served again within TTL + 5 s.
      step('SIGKILL');
      const killed = replicas.shift()!;
      const killedAt = Date.now();
      killed.serve.child.kill('SIGKILL');
      await killed.serve.exit;
      await within(allServed, 'the killed replica’s mailboxes served again', TTL_MS + 5_000, replicaLogs);
      const afterKill = Date.now() - killedAt;
      replicas.push(await startReplica('r1b'));
      await untilAllIdle('all idling after r1b joined');

      // 2. SIGSTOP past the lease: the others take over; continued, it notices and writes nothing stale.
      step('SIGSTOP');
      const paused = replicas[0]!;
      paused.paused = true;
      const pausedAt = Date.now();
      frozenUntil = Number.POSITIVE_INFINITY;
      paused.serve.child.kill('SIGSTOP');
      // Mail for every mailbox while it is paused: its frozen sessions have some to write when it continues.
      for (const u of users.slice(0, 10)) {
        sent.set(u, sent.get(u)! + 1);
        await dovecot.deliver(u, 'INBOX', message(u));
      }
      await within(allServed, 'the paused replica’s mailboxes served by the others', TTL_MS + 5_000, replicaLogs);
      const afterPause = Date.now() - pausedAt;
      await new Promise((r) => setTimeout(r, Math.max(0, TTL_MS + 1_000 - (Date.now() - pausedAt))));
      paused.serve.child.kill('SIGCONT');
      paused.paused = false;
      const noticed = (): number => (/lease imap:\S+ lost/.test(paused.serve.stdout()) ? 1 : 0);
      await untilReached(noticed, 1, 'the continued replica noticing its lost leases', replicaLogs);
      frozenUntil = Date.now() + 3_000;
      await untilAllIdle('all idling after the continued replica rejoined');

      // 3. Rolling restart, one by one (SIGTERM: mailboxes handed over at once).
      step('rolling restart');
      for (let i = 0; i < 3; i++) {
        const old = replicas.shift()!;
        step(`SIGTERM ${old.name}`);
        expect((await stopGracefully(old.serve, old.name)).code).toBe(0);
        replicas.push(await startReplica(`${old.name}+`));
        await untilAllIdle(`all idling after restarting ${old.name}`);
      }

      step('final delivery');
      generating = false;
      await generator;
      await untilReached(() => emu.emulator.stats().comments, total(), `all ${total()} messages delivered`, replicaLogs);
      step('checks');
      monitoring = false;
      await monitor;
      console.log(
        `takeover after SIGKILL ${afterKill} ms, after SIGSTOP ${afterPause} ms (bound ${TTL_MS + 5_000} ms); ${total()} messages`,
      );
      if (violations.length > 0) console.log(replicaLogs());
      expect(violations).toEqual([]);
      expect(afterKill).toBeLessThan(TTL_MS + 5_000);
      expect(afterPause).toBeLessThan(TTL_MS + 5_000);
      const stats = emu.emulator.stats();
      expect(stats.comments).toBe(total());
      expect(stats.ai_units).toBe(total());
      // None lost: each mailbox's checkpoint is at its last message.
      const db = new pg.Client({ connectionString: storeUrl });
      await db.connect();
      try {
        const { rows } = await db.query<{ key: string; value: { lastUid: number } }>('SELECT key, value FROM checkpoints');
        const last = new Map(rows.map((r) => [r.key, r.value.lastUid]));
        for (const u of users) expect(last.get(`imap:${u}:INBOX`), u).toBe(sent.get(u));
        const { rows: items } = await db.query<{ n: string }>("SELECT count(*) AS n FROM outbox WHERE status <> 'dead'");
        expect(Number(items[0]!.n)).toBe(total());
      } finally {
        await db.end();
      }
    } finally {
      generating = false;
      monitoring = false;
      await Promise.allSettled([generator, monitor]);
      for (const r of replicas) if (r.paused) r.serve.child.kill('SIGCONT');
      const stops = await Promise.allSettled(replicas.map((r) => stopGracefully(r.serve, r.name)));
      for (const s of stops) if (s.status === 'rejected') console.log(String(s.reason));
      step('stopped');
    }
  }, 900_000);
});
