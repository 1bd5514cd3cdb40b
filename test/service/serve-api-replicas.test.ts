/**
 * Graph and Gmail mailboxes across two `mailgate serve` replicas on one PostgreSQL: each mailbox
 * is its own lease (`<kind>:<name>/<user>`), read by one live replica at a time (sampled from
 * both replicas' /api/status all along); a replica killed with SIGKILL has its mailboxes taken
 * over by the other, and every message — those there at the start and those arriving after the
 * kill — is created once and billed once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { createTestDatabase } from '../support/postgres.js';
import { API_KINDS, type KindStandIn } from './api-kinds.js';
import { kindStatus } from './api-serve-setup.js';
import { eventually, killLeftovers, spawnServe, type ServeProcess } from './serve-process.js';

const MAILBOXES = 6;
const PREFILLED = 30;
const LATER = 5;

let emu: StartedEmulator;

/** Mailbox → state on one replica (`standby`: another reads it); undefined when it does not answer. */
async function states(url: string, kind: string): Promise<Map<string, string> | undefined> {
  try {
    return new Map((await kindStatus(url, kind, AbortSignal.timeout(2_000))).map((a) => [a.name, a.state]));
  } catch {
    return undefined;
  }
}

const reading = (s: string | undefined) => s !== undefined && s !== 'standby' && s !== 'stopped';

describe.each(API_KINDS)('$kind mailboxes on two mailgate serve replicas', (k) => {
  const users = Array.from({ length: MAILBOXES }, (_, i) => `shared${i}@${k.domain}`);
  let standIn: KindStandIn;
  let dir: string;
  let config: string;

  beforeAll(async () => {
    emu = await startEmulator({ autoCreateSources: true });
    standIn = await k.start();
    for (const u of users) standIn.addMailbox(u);
    const store = await createTestDatabase(`mailgate_${k.kind}_replicas`);
    dir = mkdtempSync(join(tmpdir(), `mailgate-${k.kind}-replicas-`));
    for (const u of users) standIn.deliver(u, 0, PREFILLED);
    config = standIn.write(dir, 'mailgate', emu, users, {
      store,
      entry: 'poll_interval_ms: 1000',
      delivery: '{ max_documents: 100, flush_ms: 50, heartbeat_ms: 1000 }',
      more: ['parsing: { workers: 1 }', 'leases: { ttl_ms: 6000, renew_ms: 500 }'],
    });
  }, 120_000);

  afterAll(async () => {
    killLeftovers();
    await standIn?.close();
    await emu?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('each mailbox read by one replica; after a SIGKILL the other takes them over; every message once', async () => {
    const a: ServeProcess = spawnServe(['--config', config], { cwd: dir, env: standIn.env(emu) });
    const b: ServeProcess = spawnServe(['--config', config], { cwd: dir, env: standIn.env(emu) });
    const live = new Map([
      ['a', await a.url],
      ['b', await b.url],
    ]);
    const violations: string[] = [];
    let monitoring = true;
    let sharedBefore = new Set<string>();
    const monitor = (async () => {
      while (monitoring) {
        const seen = new Map<string, string[]>();
        for (const [name, url] of live)
          for (const [m, s] of (await states(url, k.kind)) ?? []) if (reading(s)) seen.set(m, [...(seen.get(m) ?? []), name]);
        // The replicas answer a moment apart: a mailbox handed over between the two answers (a
        // replica that started alone hands the other its share once it joins) shows on both once,
        // so only one seen on both in two samples in a row counts.
        const shared = new Set<string>();
        for (const [m, by] of seen) {
          if (by.length < 2) continue;
          const key = `${m} read by ${by.join(' and ')}`;
          if (sharedBefore.has(key)) violations.push(key);
          shared.add(key);
        }
        sharedBefore = shared;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await eventually(() => emu.emulator.stats().comments === MAILBOXES * PREFILLED, 'the prefilled messages');
    // Both replicas hold a share (rendezvous hashing spreads six leases over two members). A
    // mailbox may be between them for a moment (its lease handed over after the second replica
    // joined): read again until every mailbox is read by one of them (the monitor checks never both).
    let onA: string[] = [];
    let onB: string[] = [];
    await eventually(async () => {
      const sa = await states(live.get('a')!, k.kind);
      const sb = await states(live.get('b')!, k.kind);
      onA = users.filter((u) => reading(sa?.get(`${k.instance}/${u}`)));
      onB = users.filter((u) => reading(sb?.get(`${k.instance}/${u}`)));
      return sa?.size === MAILBOXES && onA.length + onB.length === MAILBOXES;
    }, 'every mailbox read by one replica');
    // The replica holding more mailboxes (at least half) is killed; the other must take them over.
    const [victim, survivor, name, other] = onA.length >= onB.length ? [a, b, 'a', 'b'] : [b, a, 'b', 'a'];
    victim.child.kill('SIGKILL');
    live.delete(name);
    await victim.exit;
    for (const u of users) standIn.deliver(u, 100, LATER);
    const total = MAILBOXES * (PREFILLED + LATER);
    await eventually(() => emu.emulator.stats().comments === total, 'every message after the takeover', 60_000);
    await eventually(
      async () => [...((await states(live.get(other)!, k.kind)) ?? [])].every(([, s]) => reading(s)),
      'the survivor reads every mailbox',
    );
    monitoring = false;
    await monitor;
    expect(violations).toEqual([]);
    expect(emu.emulator.stats().ai_units).toBe(total);
    survivor.child.kill('SIGTERM');
    expect((await survivor.exit).code).toBe(0);
  }, 150_000);
});
