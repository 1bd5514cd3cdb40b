/**
 * The Graph proof cases through `mailgate serve` (the built CLI as a child process), the Graph
 * stand-in (this process, over HTTP) and the API emulator: a mailbox of 2,000 messages (30 % with
 * attachments) synced exactly once through a burst of 429s and a token expiring mid-sync; a 410
 * mid-sync; new mail through a notification and, with the notification dropped, through the next
 * poll; a move after delivery. SIGKILL mid-sync and a refused mailbox beside a working one are in
 * serve-api-proof.test.ts (every API mailbox kind). In each case the emulator's counters show
 * comments = AI units = messages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sampleMessage, startGraphStandIn, type GraphStandIn } from '../../adapters/graph/stand-in/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { freePort, graphEnv, graphStatus, writeGraphConfig } from './graph-serve-setup.js';
import { eventually, killLeftovers, spawnServe } from './serve-process.js';

let dir: string;
let standIn: GraphStandIn;
let emu: StartedEmulator;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-graph-proof-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  standIn = await startGraphStandIn();
  emu = await startEmulator({ autoCreateSources: true });
});
afterEach(async () => {
  killLeftovers();
  await standIn.close();
  await emu.stop();
});

const USER = 'support@contoso.test';

/** `n` messages from `from`, every third... 30 % with a 40 kB attachment. */
function fill(user: string, n: number, folder = 'inbox', from = 0, tag = 'proof'): string[] {
  return standIn.deliver(
    user,
    folder,
    Array.from({ length: n }, (_, k) => {
      const i = from + k;
      return sampleMessage(i, { mailbox: user, tag, ...(i % 10 < 3 ? { attachmentBytes: 40_000 } : {}) });
    }),
  );
}

const stats = () => emu.emulator.stats();

describe('mailgate serve: Graph proof cases, billed through the emulator', () => {
  it('2,000 messages (30 % with attachments) exactly once through a 429 burst and a token expiring mid-sync', async () => {
    standIn.addMailbox(USER);
    fill(USER, 2000);
    standIn.throttle(USER, 6, 1);
    const config = writeGraphConfig(dir, 'big', standIn, emu, [USER], { entry: 'page_size: 100, poll_interval_ms: 60000' });
    const serve = spawnServe(['--config', config], { cwd: dir, env: graphEnv(emu) });
    const url = await serve.url;
    await eventually(() => stats().comments >= 600, '600 comments');
    standIn.identity.expireAll();
    await eventually(() => stats().comments === 2000, '2000 comments', 120_000);
    const [line] = await graphStatus(url);
    expect(line).toMatchObject({ name: `m365/${USER}`, healthy: true, messages: 2000 });
    expect(stats().ai_units).toBe(2000);
    const mb = standIn.stats(USER);
    expect(mb.throttled).toBeGreaterThanOrEqual(6);
    expect(mb.early).toBe(0);
    expect(mb.maxInFlight).toBeLessThanOrEqual(4);
    expect(mb.withoutImmutableId).toBe(0);
    // The token was renewed after the refusal (more than the first one issued).
    expect(standIn.identity.issued).toBeGreaterThanOrEqual(2);
    serve.child.kill('SIGTERM');
    expect((await serve.exit).code).toBe(0);
  }, 180_000);

  it('a 410 in the middle of a round: the folder is read again in full, 0 extra AI units', async () => {
    standIn.addMailbox(USER);
    fill(USER, 400);
    const config = writeGraphConfig(dir, 'gone', standIn, emu, [USER], { entry: 'page_size: 20, poll_interval_ms: 60000' });
    const serve = spawnServe(['--config', config], { cwd: dir, env: graphEnv(emu) });
    await serve.url;
    await eventually(() => stats().comments >= 100, '100 comments');
    standIn.expireDelta(USER, 'inbox');
    await eventually(() => stats().comments === 400, '400 comments', 120_000);
    await eventually(
      () => serve.stderr().includes('MAILGATE_ERR_GRAPH_SYNC_RESET') || serve.stdout().includes('MAILGATE_ERR_GRAPH_SYNC_RESET'),
      'the reset logged',
    );
    expect(stats().ai_units).toBe(400);
    serve.child.kill('SIGTERM');
    expect((await serve.exit).code).toBe(0);
  }, 180_000);

  it('new mail through a notification within 2 s; with the notification dropped, through the next poll; then moved', async () => {
    standIn.addMailbox(USER);
    fill(USER, 5);
    const port = await freePort();
    const config = writeGraphConfig(dir, 'notify', standIn, emu, [USER], {
      port,
      notifications: true,
      entry: 'poll_interval_ms: 6000, after_delivery: "move:archive"',
    });
    const serve = spawnServe(['--config', config], { cwd: dir, env: graphEnv(emu) });
    await serve.url;
    await eventually(() => stats().comments === 5 && standIn.subscriptions.all.size === 1, 'first round and a subscription');
    // Right after a poll: the next one is about 6 s away.
    await eventually(() => standIn.count(USER, 'archive') === 5, 'moved after delivery');
    const [id] = fill(USER, 1, 'inbox', 100, 'notified');
    const sent = Date.now();
    await eventually(() => stats().comments === 6, 'the notified message');
    const latency = Date.now() - sent;
    expect(standIn.subscriptions.deliveries.filter((d) => d.kind === 'notification' && d.status === 202).length).toBeGreaterThanOrEqual(1);
    expect(latency, `notified message took ${latency} ms`).toBeLessThan(2000);
    await eventually(() => standIn.find(USER, id!)?.folder === 'archive', 'the notified message moved');
    standIn.subscriptions.drop = true;
    fill(USER, 1, 'inbox', 200, 'polled');
    await eventually(() => stats().comments === 7, 'the polled message', 30_000);
    expect(stats().ai_units).toBe(7);
    expect(standIn.count(USER, 'inbox')).toBeLessThanOrEqual(1);
    serve.child.kill('SIGTERM');
    expect((await serve.exit).code).toBe(0);
  }, 120_000);
});
