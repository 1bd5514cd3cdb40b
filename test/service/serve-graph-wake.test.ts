/**
 * A Graph change notification reaching the `mailgate serve` replica that does NOT read the
 * mailbox (two replicas on one PostgreSQL; Graph's posts go through a relay the test points at
 * either replica): the replica finds the mailbox by its saved subscriptions and passes the
 * notification on through the store, and the replica reading it delivers the new message
 * although its safety poll is ten minutes away — only the wake-up can explain the delivery.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleMessage, startGraphStandIn, type GraphStandIn } from '../../adapters/graph/stand-in/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { createTestDatabase } from '../support/postgres.js';
import { freePort, graphEnv, graphStatus, writeGraphConfig } from './graph-serve-setup.js';
import { eventually, killLeftovers, spawnServe } from './serve-process.js';

const USER = 'support@contoso.test';
let standIn: GraphStandIn;
let emu: StartedEmulator;
let dir: string;
let store: string;
let relay: Server;
/** The public listener the relay forwards Graph's posts to. */
let target = 0;
const relayed: number[] = [];

beforeAll(async () => {
  standIn = await startGraphStandIn();
  emu = await startEmulator({ autoCreateSources: true });
  store = await createTestDatabase('mailgate_graph_wake');
  dir = mkdtempSync(join(tmpdir(), 'mailgate-graph-wake-'));
  standIn.addMailbox(USER);
  standIn.deliver(USER, 'inbox', [sampleMessage(0, { mailbox: USER })]);
  relay = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const port = target;
      void fetch(`http://127.0.0.1:${port}${req.url}`, {
        method: req.method!,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: Buffer.concat(chunks),
      })
        .then(async (r) => {
          relayed.push(port);
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/plain' });
          res.end(Buffer.from(await r.arrayBuffer()));
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
}, 120_000);

afterAll(async () => {
  killLeftovers();
  relay?.closeAllConnections();
  await new Promise<void>((r) => (relay ? relay.close(() => r()) : r()));
  await standIn?.close();
  await emu?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('graph change notification to the replica not reading the mailbox', () => {
  it('wakes the replica that reads it, long before its safety poll', async () => {
    const ports = [await freePort(), await freePort()];
    target = ports[0]!;
    const notificationUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}/graph/m365/notifications`;
    const entry = 'poll_interval_ms: 600000, wake_check_ms: 200';
    const delivery = '{ max_documents: 100, flush_ms: 50, heartbeat_ms: 1000 }';
    const replicas = ports.map((port, i) => {
      const config = writeGraphConfig(dir, `r${i}`, standIn, emu, [USER], {
        port,
        notifications: true,
        notificationUrl,
        entry,
        store,
        delivery,
      });
      return spawnServe(['--config', config], { cwd: dir, env: graphEnv(emu) });
    });
    const urls = await Promise.all(replicas.map((r) => r.url));
    const stats = () => emu.emulator.stats();
    await eventually(() => stats().comments === 1 && standIn.subscriptions.all.size === 1, 'the first round and the subscription');
    const reading = await Promise.all(urls.map(async (u) => (await graphStatus(u)).some((l) => l.state === 'idle')));
    expect(reading.filter(Boolean)).toHaveLength(1);
    // Graph now reaches the other replica only.
    target = ports[reading.indexOf(false)]!;
    standIn.deliver(USER, 'inbox', [sampleMessage(1, { mailbox: USER, tag: 'notified' })]);
    await eventually(() => stats().comments === 2, 'the message notified to the other replica', 30_000);
    expect(relayed.filter((p) => p === target).length).toBeGreaterThanOrEqual(1);
    expect(stats().ai_units).toBe(2);
    for (const r of replicas) r.child.kill('SIGTERM');
    for (const r of replicas) expect((await r.exit).code).toBe(0);
  }, 120_000);
});
