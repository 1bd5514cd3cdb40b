/**
 * The API goes away mid-import (the emulator is stopped, then started again on the same port
 * with the same data): the import finishes late, loses nothing and bills each message once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator } from '../../src/emulator/index.js';
import { runCli, writeMbox } from './support.js';

const MESSAGES = 2000;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-outage-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The API's port while the API is away: every connection is cut at once (the client sees a
 * network error, as when the API is down). `attempts(n)` resolves once n connections came in,
 * so the test knows the import really met the outage instead of guessing a duration.
 */
async function deadPort(port: number): Promise<{ attempts(n: number): Promise<void>; close(): Promise<void> }> {
  let count = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.destroy();
    count += 1;
    for (const w of waiters.filter((x) => x.n <= count)) w.resolve();
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  return {
    attempts: (n) => (count >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('import across an API outage', () => {
  it('finishes after the emulator comes back, every message created and billed once', async () => {
    const mbox = join(dir, 'archive.mbox');
    writeMbox(mbox, MESSAGES, 'outage');
    const token = 'outage-token-0123';
    const emulator = createEmulator({ token, dataDir: join(dir, 'emulator'), autoCreateSources: true, logger: false });
    const url = await emulator.listen(0, '127.0.0.1');
    const port = Number(new URL(url).port);
    const run = runCli(
      [
        'import',
        '--yes',
        mbox,
        '--api-url',
        url,
        '--token',
        token,
        '--source',
        'acme/outage',
        '--store',
        `sqlite:${join(dir, 'db', 'm.db')}`,
        '--json',
      ],
      dir,
    );
    // Wait until some messages reached the API, then take it away for a while.
    while (emulator.stats().comments === 0) await sleep(20);
    await emulator.close();
    const seenBefore = emulator.stats().comments;
    // Away until the import has failed and retried a few requests.
    const away = await deadPort(port);
    await away.attempts(3);
    await away.close();
    await emulator.listen(port, '127.0.0.1');
    const result = await run.exited;
    try {
      expect(result.code, result.stderr).toBe(0);
      expect(seenBefore).toBeLessThan(MESSAGES);
      const stats = emulator.stats();
      expect(stats.comments).toBe(MESSAGES);
      expect(stats.ai_units).toBe(MESSAGES);
      const summary = JSON.parse(result.stdout.trim()) as { deadLettered: number; delivered: number; unchanged: number };
      expect(summary.deadLettered).toBe(0);
      expect(summary.delivered + summary.unchanged).toBe(MESSAGES);
    } finally {
      await emulator.close();
    }
  }, 120_000);

  it('stops at once on SIGTERM while the API is away, and the next run delivers everything once', async () => {
    const mbox = join(dir, 'term.mbox');
    writeMbox(mbox, 300, 'term');
    const token = 'outage-token-0123';
    const emulator = createEmulator({ token, dataDir: join(dir, 'emulator-term'), autoCreateSources: true, logger: false });
    const url = await emulator.listen(0, '127.0.0.1');
    const port = Number(new URL(url).port);
    await emulator.close();
    const away = await deadPort(port);
    const store = `sqlite:${join(dir, 'term', 'm.db')}`;
    const args = ['import', '--yes', mbox, '--api-url', url, '--token', token, '--source', 'acme/term', '--store', store, '--json'];
    const run = runCli(args, dir);
    // Its first request fails and is retried with backoff (minutes of budget): interrupt it once
    // that request has been cut.
    await away.attempts(1);
    await away.close();
    const signalled = Date.now();
    run.child.kill('SIGTERM');
    const result = await run.exited;
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('import interrupted; run the same command again to resume');
    await emulator.listen(port, '127.0.0.1');
    try {
      const again = await runCli(args, dir).exited;
      expect(again.code, again.stderr).toBe(0);
      expect(emulator.stats()).toMatchObject({ comments: 300, ai_units: 300 });
    } finally {
      await emulator.close();
    }
  }, 120_000);
});
