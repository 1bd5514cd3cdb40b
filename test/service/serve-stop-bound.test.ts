/**
 * `mailgate serve` stops within `delivery.drain_ms` + `server.stop_timeout_ms` of the first
 * SIGTERM even when a close hangs after the drain: here the HTTP server's, held by an upload whose
 * client sent its headers and part of its body and then nothing (the server's own request and idle
 * timeouts set to ten minutes). The process used to wait for it until the second signal; it now
 * exits with status 1 and one log line naming what was still open.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { killLeftovers, spawnServe } from './serve-process.js';

const UPLOAD_KEY = 'upload-key-0123456789abcdef';
const TEN_MINUTES = 600_000;

let dir: string;
let emu: StartedEmulator;
const sockets: Socket[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-stop-bound-'));
  emu = await startEmulator({ autoCreateSources: true });
});
afterEach(() => {
  sockets.splice(0).forEach((s) => s.destroy());
  killLeftovers();
});
afterAll(async () => {
  await emu?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function configFile(name: string, drainMs = 500): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      store: `sqlite:${join(dir, `${name}.db`)}`,
      api: { url: emu.url, token: emu.token },
      server: {
        listen: '127.0.0.1:0',
        request_timeout_ms: TEN_MINUTES,
        headers_timeout_ms: TEN_MINUTES,
        idle_timeout_ms: TEN_MINUTES,
        stop_timeout_ms: 1_000,
      },
      delivery: { drain_ms: drainMs },
      routes: [{ name: 'support', source: 'acme/support' }],
      adapters: { upload: [{ name: 'desk', route: 'support', api_keys: [UPLOAD_KEY] }] },
    }),
  );
  return file;
}

/**
 * An upload that sends its headers and the start of its body, then nothing. `Expect: 100-continue`:
 * the server's 100 answer says the request is under way (not an idle connection a close would cut).
 */
async function stalledUpload(url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let answer = '';
  const continued = new Promise<void>((resolve, reject) => {
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
      if (/^HTTP\/1\.1 100 /.test(answer)) resolve();
      else if (/^HTTP\/1\.1 /.test(answer)) reject(new Error(`the upload was answered: ${answer}`));
    });
    socket.once('error', reject);
  });
  socket.write(
    `POST /api/upload/desk HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${UPLOAD_KEY}\r\n` +
      `Content-Type: message/rfc822\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n`,
  );
  await continued;
  socket.write('Subject: never finished\r\n');
}

/** The process's exit, or a failure naming where it stood after `ms` (the old behaviour: no exit at all). */
async function exitWithin(serve: ReturnType<typeof spawnServe>, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`serve still running ${ms} ms after SIGTERM:\n${serve.stdout().slice(-3000)}`)), ms);
  });
  try {
    return await Promise.race([serve.exit, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

const logLines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('mailgate serve: the bound of a stop', () => {
  it('exits with status 1 naming the HTTP server when a client holds it open past drain_ms + stop_timeout_ms', async () => {
    const serve = spawnServe(['--config', configFile('stalled')], { cwd: dir });
    await stalledUpload(await serve.url);
    serve.child.kill('SIGTERM');
    expect(await exitWithin(serve, 30_000)).toEqual({ code: 1, signal: null });
    const line = logLines(serve.stdout()).find((l) => l['code'] === 'MAILGATE_ERR_SERVICE_STOP_TIMEOUT');
    expect(line).toMatchObject({ level: 'error', boundMs: 1_500, open: ['http server'] });
    expect(String(line?.['msg'])).toMatch(/still open: http server; exiting/);
  }, 60_000);

  it('exits with status 0 and no such line when nothing holds it', async () => {
    const serve = spawnServe(['--config', configFile('idle')], { cwd: dir });
    await serve.url;
    serve.child.kill('SIGTERM');
    expect(await exitWithin(serve, 30_000)).toEqual({ code: 0, signal: null });
    expect(serve.stdout()).toContain('"msg":"mailgate stopped"');
    expect(serve.stdout()).not.toContain('MAILGATE_ERR_SERVICE_STOP_TIMEOUT');
  }, 60_000);

  it('with drain_ms 0 and nothing queued, stops drained, without a drain warning', async () => {
    const serve = spawnServe(['--config', configFile('empty', 0)], { cwd: dir });
    await serve.url;
    serve.child.kill('SIGTERM');
    expect(await exitWithin(serve, 30_000)).toEqual({ code: 0, signal: null });
    expect(logLines(serve.stdout()).find((l) => l['msg'] === 'mailgate stopped')).toMatchObject({ drained: true });
    expect(serve.stdout()).not.toContain('MAILGATE_ERR_SERVICE_DRAIN_TIMEOUT');
  }, 60_000);
});
