/**
 * A server.listen address that is taken: a coded error naming the address and how to choose
 * another, as one line from `mailgate serve` (no stack trace), and the process exits.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/service/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { startSilentImap, type SilentServer } from '../imap/silent-server.js';
import { eventually, spawnServe } from './serve-process.js';

let dir: string;
let busy: Server;
let port: number;
let emu: StartedEmulator;
let imap: SilentServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-listen-'));
  busy = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
  port = (busy.address() as { port: number }).port;
  emu = await startEmulator({ autoCreateSources: true });
  imap = await startSilentImap();
});
afterAll(async () => {
  await new Promise<void>((r) => busy.close(() => r()));
  await emu.stop();
  await imap.close();
  rmSync(dir, { recursive: true, force: true });
});

function configFile(name: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `store: sqlite:${join(dir, name, 'mailgate.db')}`,
      `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}" }`,
      `server: { listen: 127.0.0.1:${port} }`,
      'routes: [{ name: support, source: acme/support }]',
      'adapters:',
      '  imap:',
      `    - { name: a, route: support, host: 127.0.0.1, port: ${imap.port}, secure: false, auth: { user: u, pass: p }, after_delivery: seen }`,
      '',
    ].join('\n'),
  );
  return file;
}

describe('server.listen in use', () => {
  it('startService rejects with MAILGATE_ERR_SERVICE_LISTEN naming the address and the fix', async () => {
    const config = loadConfig({ file: configFile('inproc'), env: { TEST_API_TOKEN: emu.token } });
    const err = await startService(config, { logger: createLogger(false) }).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(err?.code).toBe('MAILGATE_ERR_SERVICE_LISTEN');
    expect(err?.message).toContain(`cannot listen on 127.0.0.1:${port}: the address is already in use by another process (EADDRINUSE)`);
    expect(err?.message).toContain('Set server.listen in the configuration or MAILGATE_LISTEN to another host:port');
  });

  it('`mailgate serve` prints it as one line, without a stack trace, and exits 1', async () => {
    const serve = spawnServe(['--config', configFile('cli')], { cwd: dir, env: { TEST_API_TOKEN: emu.token } });
    let exit: { code: number | null } | undefined;
    void serve.exit.then((e) => (exit = e));
    await eventually(() => exit !== undefined, 'the process to exit', 30_000);
    expect(exit!.code).toBe(1);
    const lines = serve
      .stderr()
      .split('\n')
      .filter((l) => l.includes('MAILGATE_ERR_SERVICE_LISTEN'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mailgate: MAILGATE_ERR_SERVICE_LISTEN: cannot listen on 127\.0\.0\.1:\d+/);
    expect(serve.stderr()).not.toMatch(/^\s+at /m);
  });
});
