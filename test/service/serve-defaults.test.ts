/** `mailgate serve` with no configuration at all: the embedded defaults a new user starts with. */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, spawnServe } from './serve-process.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('mailgate serve on embedded defaults', () => {
  it('ingests samples/ into the built-in emulator from any working directory, under ./data, and stops cleanly', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'mailgate-defaults-'));
    dirs.push(cwd);
    const serve = spawnServe([], { cwd, env: { MAILGATE_LISTEN: '127.0.0.1:0' } });
    const url = await serve.url;
    const key = await serve.adminKey;
    expect(serve.stderr()).toMatch(/BUILT-IN EMULATOR at http:\/\/127\.0\.0\.1:\d+/);
    type Status = {
      routes: Array<{ route: string; target: string; delivered: number; outbox: { queued: number } }>;
      adapters: Array<{ state: string }>;
      owners: Array<{ pid: number; heartbeatAgeMs: number }>;
    };
    let status: Status | undefined;
    await eventually(async () => {
      status = (await (await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${key}` } })).json()) as Status;
      return status.adapters[0]?.state === 'finished' && status.routes[0]!.outbox.queued === 0 && status.routes[0]!.delivered > 0;
    }, 'the samples to be delivered');
    expect(status!.routes[0]).toMatchObject({ route: 'samples', target: 'mailgate/samples' });
    expect(status!.routes[0]!.delivered).toBeGreaterThanOrEqual(50);
    // The running service is the one registered owner of outbox claims.
    expect(status!.owners.map((o) => o.pid)).toEqual([serve.child.pid]);
    expect(serve.stdout()).toMatch(/"msg":"delivered \d+ comment\(s\) to mailgate\/samples"/);
    // The deliberately broken samples: one warning line each, with the reason and no stack trace,
    // saying what became of them as import does (the log said "skipped" of what is a dead letter).
    const kept = serve
      .stdout()
      .split('\n')
      .filter((l) => l.includes('"msg":"file item kept as a dead letter: '));
    expect(kept.filter((l) => /samples\/files\/bad\/(corrupt|truncated)\.msg/.test(l))).toHaveLength(2);
    expect(kept.every((l) => l.includes('"code":"MAILGATE_ERR_INPUT_MSG_INVALID"'))).toBe(true);
    expect(serve.stdout()).not.toContain('file item skipped');
    expect(serve.stdout()).not.toContain('"stack"');
    expect(existsSync(join(cwd, 'data', 'mailgate.db'))).toBe(true);
    // The admin key is kept beside the store, readable by its owner only.
    expect(serve.stderr()).toContain(`admin key: ${key}  (generated, kept in ${join(cwd, 'data', 'admin-key')}`);
    expect(statSync(join(cwd, 'data', 'admin-key')).mode & 0o777).toBe(0o600);
    serve.child.kill('SIGINT');
    expect(await serve.exit).toEqual({ code: 0, signal: null });

    // A restart finds everything delivered already: nothing new is sent.
    const again = spawnServe([], { cwd, env: { MAILGATE_LISTEN: '127.0.0.1:0' } });
    const url2 = await again.url;
    const key2 = await again.adminKey;
    // The same admin key: a console tab opened before the restart stays signed in.
    expect(key2).toBe(key);
    await eventually(async () => {
      const s = (await (await fetch(`${url2}/api/status`, { headers: { authorization: `Bearer ${key2}` } })).json()) as Status;
      return s.adapters[0]?.state === 'finished';
    }, 'the samples adapter to finish');
    expect(again.stdout()).not.toMatch(/"msg":"delivered [1-9]\d* comment/);
    again.child.kill('SIGTERM');
    expect((await again.exit).code).toBe(0);
  });
});
