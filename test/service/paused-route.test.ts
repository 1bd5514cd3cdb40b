/**
 * A route that cannot deliver looked healthy: with a wrong API token the log said "paused" but
 * /api/status had no paused field, no metric said it, and shutdown waited out the whole drain
 * although nothing could be delivered. Now the pause is in /api/status (code and since when), in
 * the gauge mailgate_route_paused, in `mailgate status`; /readyz stays ready (intake still
 * works); shutdown does not wait for the paused route.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { runMailgate } from '../cli/support/dist.js';
import { eventually, ROOT } from './serve-process.js';
import { drained } from '../support/drained.js';

const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
const ADMIN_KEY = 'admin-key-0123456789abcdef';
const auth = { authorization: `Bearer ${ADMIN_KEY}` };

let dir: string;
let emu: StartedEmulator;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-paused-'));
  emu = await startEmulator({ autoCreateSources: true });
});
afterAll(async () => {
  await emu?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface RouteStatus {
  route: string;
  paused: { code: string; message: string; since: string; until: string } | null;
}

describe('a paused route', () => {
  it('shows in /api/status, the gauge and `mailgate status`, keeps /readyz ready, and shutdown does not wait for it', async () => {
    const inbox = join(dir, 'inbox');
    mkdirSync(inbox);
    writeFileSync(join(inbox, 'a.eml'), 'From: a@example.com\r\nSubject: hi\r\nMessage-ID: <paused-a@example.com>\r\n\r\nhello\r\n');
    const store = `sqlite:${join(dir, 'mailgate.db')}`;
    const config = loadConfig({
      overrides: {
        store,
        api: { url: emu.url, token: 'wrong-token' },
        server: { listen: '127.0.0.1:0', api_keys: [ADMIN_KEY] },
        parsing: { workers: 1 },
        routes: [{ name: 'support', source: 'acme/support' }],
        adapters: { files: [{ name: 'drop', route: 'support', paths: [inbox] }] },
      } as never,
    });
    const { startService } = (await import(SERVICE)) as typeof import('../../src/service/index.js');
    // A drain bound far beyond the test's timeout: waiting it out would fail the test.
    const service = await startService(drained(config, 3_600_000), { logger: createLogger(false) });
    try {
      let route: RouteStatus | undefined;
      await eventually(async () => {
        const status = (await (await fetch(`${service.url}/api/status`, { headers: auth })).json()) as { routes: RouteStatus[] };
        route = status.routes.find((r) => r.route === 'support');
        return route?.paused !== null && route?.paused !== undefined;
      }, 'the route to be paused');
      expect(route!.paused).toMatchObject({ code: 'MAILGATE_ERR_API_UNAUTHORIZED' });
      expect(Number.isNaN(Date.parse(route!.paused!.since))).toBe(false);

      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      expect(metrics).toContain('mailgate_route_paused{route="support"} 1');

      const ready = await fetch(`${service.url}/readyz`);
      expect(ready.status).toBe(200);

      const cli = await runMailgate(['status', '--store', store]);
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toMatch(/support: .*\n {4}PAUSED since .*: MAILGATE_ERR_API_UNAUTHORIZED: /);
      const json = await runMailgate(['status', '--store', store, '--json']);
      const routes = (JSON.parse(json.stdout) as { routes: RouteStatus[] }).routes;
      expect(routes.find((r) => r.route === 'support')!.paused).toMatchObject({ code: 'MAILGATE_ERR_API_UNAUTHORIZED' });
    } finally {
      const stopped = await service.stop();
      // The item stays queued for the next start: nothing was lost, nothing waited for.
      expect(stopped.drained).toBe(false);
    }
  }, 60_000);
});
