/**
 * A Pub/Sub push reaching the `mailgate serve` replica that does NOT read the mailbox (two
 * replicas on one PostgreSQL, each with its own public listener): it is passed on through the
 * store, and the replica reading the mailbox delivers the new message although its poll is ten
 * minutes away — only the wake-up can explain the delivery.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleMessage, startGmailStandIn, type GmailStandIn } from '../../adapters/gmail/stand-in/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { createTestDatabase } from '../support/postgres.js';
import { AUDIENCE, gmailEnv, gmailStatus, PUSHER, writeGmailConfig } from './gmail-serve-setup.js';
import { freePort } from './api-serve-setup.js';
import { eventually, killLeftovers, spawnServe } from './serve-process.js';

const USER = 'support@example.test';
let standIn: GmailStandIn;
let emu: StartedEmulator;
let dir: string;
let store: string;

beforeAll(async () => {
  standIn = await startGmailStandIn();
  emu = await startEmulator({ autoCreateSources: true });
  store = await createTestDatabase('mailgate_gmail_wake');
  dir = mkdtempSync(join(tmpdir(), 'mailgate-gmail-wake-'));
  standIn.addMailbox(USER);
  standIn.deliver(USER, [sampleMessage(0, { mailbox: USER })]);
}, 120_000);

afterAll(async () => {
  killLeftovers();
  await standIn?.close();
  await emu?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('gmail push to the replica not reading the mailbox', () => {
  it('wakes the replica that reads it, long before its poll', async () => {
    const ports = [await freePort(), await freePort()];
    const entry = 'poll_interval_ms: 600000, wake_check_ms: 200';
    const delivery = '{ max_documents: 100, flush_ms: 50, heartbeat_ms: 1000 }';
    const replicas = ports.map((pushPort, i) => {
      const config = writeGmailConfig(dir, `r${i}`, standIn, emu, [USER], { pushPort, entry, store, delivery });
      return spawnServe(['--config', config], { cwd: dir, env: gmailEnv(emu) });
    });
    const urls = await Promise.all(replicas.map((r) => r.url));
    const stats = () => emu.emulator.stats();
    await eventually(() => stats().comments === 1 && standIn.pubsub.watches === 1, 'the first round and the watch');
    const reading = await Promise.all(urls.map(async (u) => (await gmailStatus(u)).some((l) => l.state === 'idle')));
    expect(reading.filter(Boolean)).toHaveLength(1);
    // Pub/Sub posts to the other replica's public listener.
    const other = reading.indexOf(false);
    standIn.pubsub.target = {
      endpoint: `http://127.0.0.1:${ports[other]}/gmail/workspace/push`,
      audience: AUDIENCE,
      serviceAccount: PUSHER,
    };
    standIn.deliver(USER, [sampleMessage(1, { mailbox: USER, tag: 'pushed' })]);
    await eventually(() => stats().comments === 2, 'the message pushed to the other replica', 30_000);
    expect(standIn.pubsub.deliveries.filter((d) => d.forged === undefined && d.status === 204).length).toBeGreaterThanOrEqual(1);
    expect(stats().ai_units).toBe(2);
    for (const r of replicas) r.child.kill('SIGTERM');
    for (const r of replicas) expect((await r.exit).code).toBe(0);
  }, 120_000);
});
