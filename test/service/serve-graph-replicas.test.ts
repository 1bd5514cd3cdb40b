/**
 * Graph mailboxes across two `mailgate serve` replicas on one PostgreSQL: each mailbox is its
 * own lease (`graph:<name>/<user>`), read by one live replica at a time (sampled from both
 * replicas' /api/status all along); a replica killed with SIGKILL has its mailboxes taken over
 * by the other, and every message — those there at the start and those arriving after the kill —
 * is created once and billed once.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleMessage, startGraphStandIn, type GraphStandIn } from '../../adapters/graph/stand-in/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { createTestDatabase } from '../support/postgres.js';
import { ADMIN_KEY, graphEnv } from './graph-serve-setup.js';
import { eventually, killLeftovers, spawnServe, type ServeProcess } from './serve-process.js';

const MAILBOXES = 6;
const PREFILLED = 30;
const LATER = 5;
const users = Array.from({ length: MAILBOXES }, (_, i) => `shared${i}@contoso.test`);
let standIn: GraphStandIn;
let emu: StartedEmulator;
let dir: string;
let config: string;

beforeAll(async () => {
  standIn = await startGraphStandIn();
  emu = await startEmulator({ autoCreateSources: true });
  const store = await createTestDatabase('mailgate_graph_replicas');
  dir = mkdtempSync(join(tmpdir(), 'mailgate-graph-replicas-'));
  for (const u of users) {
    standIn.addMailbox(u);
    standIn.deliver(
      u,
      'inbox',
      Array.from({ length: PREFILLED }, (_, i) => sampleMessage(i, { mailbox: u, tag: u })),
    );
  }
  config = join(dir, 'mailgate.yaml');
  writeFileSync(
    config,
    [
      `store: ${store}`,
      `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}", retry: { base_delay_ms: 50, max_delay_ms: 200 } }`,
      `server: { listen: 127.0.0.1:0, api_keys: ["\${TEST_ADMIN_KEY}"] }`,
      'log_level: info',
      'parsing: { workers: 1 }',
      'delivery: { max_documents: 100, flush_ms: 50, heartbeat_ms: 1000 }',
      'leases: { ttl_ms: 6000, renew_ms: 500 }',
      'routes:',
      '  - { name: support, source: acme/support }',
      'adapters:',
      '  graph:',
      `    - { name: m365, route: support, tenant_id: ${standIn.tenantId}, client_id: 3b1a5f0e-0000-4000-8000-000000000001, ` +
        `auth: { client_secret: "\${GRAPH_SECRET}" }, authority_url: "${standIn.url}", graph_url: "${standIn.graphUrl}", ` +
        `poll_interval_ms: 1000, mailboxes: [${users.map((u) => `{ user: "${u}" }`).join(', ')}] }`,
      '',
    ].join('\n'),
  );
}, 120_000);

afterAll(async () => {
  killLeftovers();
  await standIn?.close();
  await emu?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Mailbox → state on one replica (`standby`: another reads it); undefined when it does not answer. */
async function states(url: string): Promise<Map<string, string> | undefined> {
  try {
    const res = await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${ADMIN_KEY}` }, signal: AbortSignal.timeout(2_000) });
    const body = (await res.json()) as { adapters: Array<{ kind: string; name: string; state: string }> };
    return new Map(body.adapters.filter((a) => a.kind === 'graph').map((a) => [a.name, a.state]));
  } catch {
    return undefined;
  }
}

const reading = (s: string | undefined) => s !== undefined && s !== 'standby' && s !== 'stopped';

describe('Graph mailboxes on two mailgate serve replicas', () => {
  it('each mailbox read by one replica; after a SIGKILL the other takes them over; every message once', async () => {
    const a: ServeProcess = spawnServe(['--config', config], { cwd: dir, env: graphEnv(emu) });
    const b: ServeProcess = spawnServe(['--config', config], { cwd: dir, env: graphEnv(emu) });
    const live = new Map([
      ['a', await a.url],
      ['b', await b.url],
    ]);
    const violations: string[] = [];
    let monitoring = true;
    const monitor = (async () => {
      while (monitoring) {
        const seen = new Map<string, string[]>();
        for (const [name, url] of live)
          for (const [m, s] of (await states(url)) ?? []) if (reading(s)) seen.set(m, [...(seen.get(m) ?? []), name]);
        for (const [m, by] of seen) if (by.length > 1) violations.push(`${m} read by ${by.join(' and ')}`);
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
      const sa = await states(live.get('a')!);
      const sb = await states(live.get('b')!);
      onA = users.filter((u) => reading(sa?.get(`m365/${u}`)));
      onB = users.filter((u) => reading(sb?.get(`m365/${u}`)));
      return sa?.size === MAILBOXES && onA.length + onB.length === MAILBOXES;
    }, 'every mailbox read by one replica');
    // The replica holding more mailboxes (at least half) is killed; the other must take them over.
    const [victim, survivor, name, other] = onA.length >= onB.length ? [a, b, 'a', 'b'] : [b, a, 'b', 'a'];
    victim.child.kill('SIGKILL');
    live.delete(name);
    await victim.exit;
    for (const u of users) {
      standIn.deliver(
        u,
        'inbox',
        Array.from({ length: LATER }, (_, i) => sampleMessage(100 + i, { mailbox: u, tag: u })),
      );
    }
    const total = MAILBOXES * (PREFILLED + LATER);
    await eventually(() => emu.emulator.stats().comments === total, 'every message after the takeover', 60_000);
    await eventually(
      async () => [...((await states(live.get(other)!)) ?? [])].every(([, s]) => reading(s)),
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
