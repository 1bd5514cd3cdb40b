/**
 * The proof cases that hold for every API mailbox kind (Graph, Gmail) through `mailgate serve`
 * (the built CLI as a child process), the kind's stand-in (this process, over HTTP) and the API
 * emulator: SIGKILL in the middle of a first round and a restart, every message once; a mailbox
 * the provider refuses beside a working one, its coded error in /api/status, the console's
 * overview and `mailgate status`, the other read. The kinds' own cases are in
 * serve-graph-proof.test.ts and serve-gmail-proof.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { API_KINDS, type KindStandIn } from './api-kinds.js';
import { ADMIN_KEY, kindStatus } from './api-serve-setup.js';
import { CLI, eventually, killLeftovers, spawnServe } from './serve-process.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-api-proof-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.each(API_KINDS)('mailgate serve: $kind proof cases every API mailbox kind passes', (k) => {
  let standIn: KindStandIn;
  let emu: StartedEmulator;
  const stats = () => emu.emulator.stats();
  const USER = `support@${k.domain}`;
  afterEach(async () => {
    killLeftovers();
    await standIn.close();
    await emu.stop();
  });
  const start = async () => {
    standIn = await k.start();
    emu = await startEmulator({ autoCreateSources: true });
  };

  it('SIGKILL in the middle of a first round and a restart: every message once', async () => {
    await start();
    standIn.addMailbox(USER);
    standIn.deliver(USER, 0, 600, 40_000);
    const config = standIn.write(dir, `${k.kind}-kill`, emu, [USER], { entry: 'page_size: 20, poll_interval_ms: 60000' });
    const first = spawnServe(['--config', config], { cwd: dir, env: standIn.env(emu) });
    await first.url;
    await eventually(() => stats().comments >= 150, '150 comments');
    first.child.kill('SIGKILL');
    await first.exit;
    expect(stats().comments).toBeLessThan(600);
    const second = spawnServe(['--config', config], { cwd: dir, env: standIn.env(emu) });
    await second.url;
    await eventually(() => stats().comments === 600, '600 comments', 120_000);
    expect(stats().ai_units).toBe(600);
    second.child.kill('SIGTERM');
    expect((await second.exit).code).toBe(0);
  }, 180_000);

  it('a mailbox the provider refuses beside a working one: its coded error in /api/status, the overview and mailgate status, the other read', async () => {
    await start();
    const refused = `refused@${k.domain}`;
    standIn.addMailbox(refused, true);
    standIn.addMailbox(USER);
    standIn.deliver(USER, 0, 20);
    const config = standIn.write(dir, `${k.kind}-refused`, emu, [refused, USER], { entry: 'poll_interval_ms: 60000' });
    const serve = spawnServe(['--config', config], { cwd: dir, env: standIn.env(emu) });
    const url = await serve.url;
    await eventually(() => stats().comments === 20, '20 comments');
    await eventually(async () => (await kindStatus(url, k.kind)).some((l) => l.lastError?.code === k.failing.code), 'the error shown');
    const lines = await kindStatus(url, k.kind);
    expect(lines.find((l) => l.name === `${k.instance}/${refused}`)).toMatchObject({ healthy: false, state: 'backoff' });
    expect(lines.find((l) => l.name === `${k.instance}/${USER}`)).toMatchObject({ healthy: true, messages: 20 });
    // The console's overview (the page's "Mailboxes and adapters" panel) shows it too.
    const overview = (await (await fetch(`${url}/api/overview`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as {
      adapters: Array<{ name: string; last_error: { code: string } | null }>;
    };
    expect(overview.adapters.find((a) => a.name === `${k.instance}/${refused}`)?.last_error?.code).toBe(k.failing.code);
    // `mailgate status` reads the store: the mailbox's error is there too.
    const env = { PATH: process.env['PATH'] ?? '', ...standIn.env(emu) };
    const status = () => execFileSync(process.execPath, [CLI, 'status', '--config', config], { cwd: dir, env, encoding: 'utf8' });
    await eventually(() => status().includes('mailbox errors:'), 'mailgate status showing the mailbox error');
    expect(status()).toContain(`${k.kind}:${k.instance}/${refused}: ${k.failing.code}: `);
    expect(status()).not.toContain(`${k.kind}:${k.instance}/${USER}: MAILGATE_ERR`);
    serve.child.kill('SIGTERM');
    expect((await serve.exit).code).toBe(0);
  }, 120_000);
});
