/**
 * When the store cannot take a pushed message the provider gets 503 with Retry-After and nothing
 * is stored; the provider's retry after recovery lands and is delivered once. Two honest
 * failures through the compiled service: the SQLite file locked by another connection (an
 * exclusive transaction held past the store's busy timeout), and a full outbox
 * (`delivery.max_outbox: 2` while the API answers 503, so queued items stay queued).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { FaultRule } from '../../src/emulator/index.js';
import { createLogger } from '../../src/logger.js';
import type { Service } from '../../src/service/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { eventually } from '../service/serve-process.js';
import { ADMIN_KEY, BEARER_KEY, message, startService } from './support.js';
import { drained } from '../support/drained.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function withService(
  faults: FaultRule[],
  delivery: Record<string, unknown>,
  fn: (service: Service, emu: StartedEmulator, db: string) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-push-outage-'));
  dirs.push(dir);
  const db = join(dir, 'mg.db');
  const emu = await startEmulator({ autoCreateSources: true, faults });
  const config = loadConfig({
    overrides: {
      store: `sqlite:${db}`,
      // One attempt per request: a 503 schedules the item's retry, and the item stays queued.
      api: { url: emu.url, token: emu.token, retry: { max_attempts: 1 } },
      server: { listen: '127.0.0.1:0', api_keys: [ADMIN_KEY] },
      delivery: { flush_ms: 0, ...delivery },
      routes: [{ name: 'support', source: 'acme/support' }],
      adapters: { webhooks: [{ name: 'worker-in', provider: 'raw', route: 'support', bearer_keys: [BEARER_KEY] }] },
      log_level: 'error',
    } as never,
  });
  const service = await startService(drained(config), { logger: createLogger(false) });
  try {
    await fn(service, emu, db);
  } finally {
    await service.stop();
    await emu.stop();
  }
}
const send = (service: Service, raw: Buffer) =>
  fetch(`${service.url}/webhooks/worker-in`, {
    method: 'POST',
    headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${BEARER_KEY}` },
    body: new Uint8Array(raw),
  });

async function total(service: Service): Promise<number> {
  return (await service.runtime.store.outboxCounts()).reduce((n, c) => n + c.count, 0);
}

async function expectUnavailable(res: Response, code: string): Promise<void> {
  expect(res.status).toBe(503);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
}

describe('push intake: the store unavailable', () => {
  it('answers 503 with Retry-After while the database is locked, stores nothing, and takes the retry after', async () => {
    await withService([], {}, async (service, emu, db) => {
      const raw = message('locked');
      const lock = new Database(db);
      try {
        lock.pragma('busy_timeout = 10000');
        lock.exec('BEGIN EXCLUSIVE');
        // The store waits its busy timeout (5 s) for the lock, then gives up: the provider retries.
        await expectUnavailable(await send(service, raw), 'MAILGATE_ERR_INTAKE_UNAVAILABLE');
        expect(lock.prepare('SELECT count(*) AS n FROM outbox').get()).toEqual({ n: 0 });
        lock.exec('ROLLBACK');
      } finally {
        lock.close();
      }
      expect(await total(service)).toBe(0);
      expect((await send(service, raw)).status).toBe(200);
      expect((await send(service, raw)).status).toBe(200);
      await eventually(async () => (await service.runtime.store.counters('support'))[0]?.delivered === 1, 'the retry delivered');
      expect(await total(service)).toBe(1);
      expect(emu.emulator.stats()).toMatchObject({ comments: 1, ai_units: 1 });
    });
  }, 60_000);
});

describe('push intake: the outbox full', () => {
  it('answers 503 MAILGATE_ERR_INTAKE_OUTBOX_FULL past delivery.max_outbox, and takes the retry once there is room', async () => {
    await withService([{ endpoint: 'sync-raw-emails', status: 503 }], { max_outbox: 2 }, async (service, emu) => {
      const raws = [1, 2, 3].map((i) => message(`full-${i}`));
      expect((await send(service, raws[0]!)).status).toBe(200);
      expect((await send(service, raws[1]!)).status).toBe(200);
      await expectUnavailable(await send(service, raws[2]!), 'MAILGATE_ERR_INTAKE_OUTBOX_FULL');
      // A retry of a stored message is still answered as the duplicate it is.
      expect((await send(service, raws[0]!)).status).toBe(200);
      expect(await total(service)).toBe(2);

      emu.emulator.setFaults([]);
      await eventually(async () => (await service.runtime.store.outboxDepth()) === 0, 'the outbox drained');
      expect((await send(service, raws[2]!)).status).toBe(200);
      await eventually(async () => (await service.runtime.store.counters('support'))[0]?.delivered === 3, '3 delivered');
      expect(await total(service)).toBe(3);
      expect(emu.emulator.stats()).toMatchObject({ comments: 3, ai_units: 3 });
    });
  }, 60_000);
});
