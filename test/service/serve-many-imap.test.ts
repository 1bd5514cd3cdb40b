/**
 * `mailgate serve` with many IMAP accounts against one Dovecot (the built CLI as a child
 * process): every account reaches idle, nothing piles listeners on a shared signal or emitter
 * (Node prints MaxListenersExceededWarning past 10), and SIGTERM stops all of them promptly.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { ADMIN_KEY, imapStatus } from './imap-serve-setup.js';
import { eventually, killLeftovers, spawnServe } from './serve-process.js';

const ACCOUNTS = 30;

let dovecot: DovecotServer;
let emu: StartedEmulator;
let dir: string;
const users: string[] = [];

beforeAll(async () => {
  dovecot = await startDovecot();
  emu = await startEmulator({ autoCreateSources: true });
  dir = mkdtempSync(join(tmpdir(), 'mailgate-serve-many-'));
  for (let i = 0; i < ACCOUNTS; i++) users.push(`many${process.pid}x${i}`);
  await dovecot.addUsers(users.map((user) => ({ user, pass: `pw-${user}` })));
}, 120_000);
afterAll(async () => {
  await emu?.stop();
  await dovecot?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(killLeftovers);

function writeManyConfig(): string {
  const file = join(dir, 'many.yaml');
  const account = (u: string) =>
    `    - { name: ${u}, route: support, host: ${dovecot.host}, port: ${dovecot.port}, secure: false, ` +
    `auth: { user: ${u}, pass: pw-${u} } }`;
  writeFileSync(
    file,
    [
      `store: sqlite:${join(dir, 'many.db')}`,
      `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}" }`,
      `server: { listen: 127.0.0.1:0, api_keys: ["\${TEST_ADMIN_KEY}"] }`,
      'log_level: info',
      'routes: [{ name: support, source: acme/support }]',
      'adapters:',
      '  imap:',
      ...users.map(account),
      '',
    ].join('\n'),
  );
  return file;
}

describe(`mailgate serve with ${ACCOUNTS} IMAP accounts`, () => {
  it('idles every account, prints no MaxListenersExceededWarning, and stops promptly on SIGTERM', async () => {
    const serve = spawnServe(['--config', writeManyConfig()], {
      cwd: dir,
      env: { TEST_API_TOKEN: emu.token, TEST_ADMIN_KEY: ADMIN_KEY },
    });
    const url = await serve.url;
    await eventually(
      async () => (await imapStatus(url)).filter((a) => a.state === 'idle').length === ACCOUNTS,
      `all ${ACCOUNTS} accounts idle`,
    );
    // A Dovecot restart drops every connection at once: the reconnects (paced) bring all back.
    await dovecot.restart();
    await eventually(
      async () => (await imapStatus(url)).filter((a) => a.state === 'idle' && a.failures > 0).length === ACCOUNTS,
      `all ${ACCOUNTS} accounts idle again after the restart`,
    );
    serve.child.kill('SIGTERM');
    // Bounded: a stop that hangs on one account fails the test here instead of at the suite's timeout.
    let exited: { code: number | null } | undefined;
    void serve.exit.then((e) => (exited = e));
    await eventually(() => exited !== undefined, 'the process to exit after SIGTERM', 20_000);
    expect(exited!.code).toBe(0);
    // Node prints its process warnings on stderr; the service logs on stdout.
    expect(serve.stderr()).not.toContain('MaxListenersExceededWarning');
    expect(serve.stderr()).not.toMatch(/\(node:\d+\) \w*Warning/);
    // Every account says it stopped. Each LOGOUT is bounded (2 s, then the socket is closed), and
    // on a loaded machine one of 30 can pass that bound: most, not all, must have logged out.
    const log = serve.stdout() + serve.stderr();
    expect(log.match(/disconnected: the service is stopping/g) ?? []).toHaveLength(ACCOUNTS);
    expect((log.match(/disconnected: the service is stopping \(logged out\)/g) ?? []).length).toBeGreaterThan(ACCOUNTS / 2);
  }, 240_000);
});
