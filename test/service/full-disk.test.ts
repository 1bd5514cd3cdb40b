/**
 * A full disk through `mailgate serve` (in-process, compiled), made deterministic with SQLite's
 * `max_page_count`: a ballast table fills the store to its ceiling. While full, a webhook gets
 * 503 with Retry-After, an SMTP client 451, the IMAP checkpoint does not move, /readyz answers
 * 503 with the store `full`, the console's overview says so and the log has one error line.
 * When space returns (the ballast dropped from another connection) everything resumes by itself:
 * the retries land, every message is delivered once and billed once. With no traffic at all,
 * the space probe alone brings /readyz back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulator } from '../../adapters/index.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { openStore } from '../../src/store/index.js';
import type { Service } from '../../src/service/index.js';
import { textMessage } from '../imap/messages.js';
import { RawClient } from '../smtp/client.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { eventually, ROOT } from './serve-process.js';
import { drained } from '../support/drained.js';

const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
const startService: typeof import('../../src/service/index.js').startService = async (...args) =>
  ((await import(SERVICE)) as typeof import('../../src/service/index.js')).startService(...args);

const SECRET = 'full-disk-webhook-secret-0123456789';
const ADMIN = 'full-disk-admin-key-0123456789abcdef';
const BIG = 'the quick brown fox jumps over the lazy dog '.repeat(3_000);

let dir: string;
let dovecot: DovecotServer;
let emu: StartedEmulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-full-disk-'));
  dovecot = await startDovecot();
  emu = await startEmulator({ autoCreateSources: true });
});
afterAll(async () => {
  await emu?.stop();
  await dovecot?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A message of ~130 kB with its own Message-ID. */
const big = (tag: string) => textMessage(0, `full ${tag}`).replace('<msg-0@mailgate.test>', `<${tag}@mailgate.test>`) + BIG + '\r\n';

describe('a full disk under mailgate serve', () => {
  it('refuses pushes with a retryable answer, holds the IMAP checkpoint, reports it, and resumes by itself when space returns', async () => {
    // A store at its ceiling: migrated, then a ballast table that leaves a few pages free.
    const path = join(dir, 'mailgate.db');
    await (await openStore(`sqlite:${path}`)).close();
    const db = new Database(path);
    db.exec('CREATE TABLE ballast (b BLOB)');
    for (let i = 0; i < 64; i++) db.prepare('INSERT INTO ballast VALUES (?)').run(Buffer.alloc(32_768));
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.close();

    const user = `full${process.pid}`;
    await dovecot.addUser(user, 'pw-full');
    dovecot.fillMaildir(user, 'INBOX', [textMessage(1, 'before the disk filled')]);
    let log = '';
    const sink = new Writable({ write: (chunk: Buffer, _e, cb) => ((log += chunk.toString()), cb()) });
    const config = loadConfig({
      overrides: {
        store: `sqlite:${path}?max_page_count=${pages + 12}`,
        api: { url: emu.url, token: emu.token, retry: { max_attempts: 3, base_delay_ms: 10, max_delay_ms: 20 } },
        server: { listen: '127.0.0.1:0', api_keys: [ADMIN] },
        delivery: { flush_ms: 0 },
        routes: [{ name: 'support', source: 'acme/full' }],
        adapters: {
          webhooks: [{ name: 'raw-in', provider: 'raw', route: 'support', hmac_secret: SECRET }],
          smtp: [{ name: 'mx', route: 'support', listen: '127.0.0.1:0', recipients: [{ match: '*' }] }],
          imap: [
            {
              name: user,
              route: 'support',
              host: dovecot.host,
              port: dovecot.port,
              secure: false,
              auth: { user, pass: 'pw-full' },
              folders: ['INBOX'],
            },
          ],
        },
        log_level: 'info',
      } as never,
    });
    const service: Service = await startService(drained(config), {
      logger: createLogger({ level: 'info', destination: sink }),
      leaseMs: 2_000,
    });
    try {
      const store = service.runtime.store;
      await eventually(() => emu.emulator.stats().comments === 1, 'the first IMAP message delivered');
      const smtp = service.adapters.find((e) => e.kind === 'smtp')!;
      await eventually(() => smtp.adapter.health!()[0]!.state === 'listening', 'smtp listening');
      const smtpPort = Number(String(smtp.adapter.health!()[0]!.detail!['address']).split(':').pop());
      const { simulator: sim } = await simulator();
      const hook = sim.entryFromSecrets('raw', { hmacSecret: SECRET }, service.url);
      const post = async (tag: string) => {
        const req = sim.request(hook, Buffer.from(big(tag)), { url: '/webhooks/raw-in', now: Date.now() });
        return fetch(`${service.url}/webhooks/raw-in`, { method: 'POST', headers: req.headers, body: new Uint8Array(req.body) });
      };

      // Fill what is left: the first big push that does not fit is refused, retryably.
      let refused: Response | undefined;
      for (let i = 0; i < 20 && refused === undefined; i++) {
        const res = await post(`fill-${i}`);
        if (res.status === 503) refused = res;
        else expect(res.status).toBe(200);
      }
      expect(refused?.status).toBe(503);
      expect(refused?.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(store.health().full).toBeDefined();
      expect(await RawClient.send(smtpPort, big('smtp-while-full'))).toBe(451);

      // IMAP: new mail cannot be stored, so its checkpoint stays where it was.
      const imapCheckpoints = async () => (await store.listCheckpoints()).filter((c) => c.key.startsWith('imap:')).map((c) => c.value);
      const before = await imapCheckpoints();
      await dovecot.append(user, 'INBOX', [big('imap-while-full')]);
      await eventually(
        () => /MAILGATE_ERR_STORE_UNAVAILABLE/.test(log) && /"code":"MAILGATE_ERR_STORE_FULL"/.test(log),
        'the full store logged',
      );
      expect(await imapCheckpoints()).toEqual(before);

      const ready = await fetch(`${service.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { checks: Record<string, unknown> }).checks['store']).toEqual({
        ok: false,
        state: 'full',
        code: 'MAILGATE_ERR_STORE_FULL',
      });
      const overview = await fetch(`${service.url}/api/overview`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(((await overview.json()) as { store: { full: unknown } }).store.full).toMatchObject({ method: expect.any(String) });

      // Space returns (another process frees it): everything resumes with no restart.
      const other = new Database(path);
      other.exec('DROP TABLE ballast');
      other.close();
      expect((await post('after')).status).toBe(200);
      expect(await RawClient.send(smtpPort, big('smtp-while-full'))).toBe(250);
      await eventually(async () => JSON.stringify(await imapCheckpoints()) !== JSON.stringify(before), 'the IMAP checkpoint moved on');
      const enqueued = async () => (await store.counters()).find((c) => c.route === 'support')!.enqueued;
      await eventually(
        async () => (await store.outboxDepth()) === 0 && emu.emulator.stats().comments === (await enqueued()),
        'every stored message delivered',
      );
      await eventually(async () => (await fetch(`${service.url}/readyz`)).status === 200, '/readyz ready again');
      expect(store.health()).toEqual({});
      await eventually(() => /store writable again/.test(log), 'the recovery logged');
      // Once each: the refused ones were retried, not duplicated; nothing billed twice.
      const stats = emu.emulator.stats();
      expect(stats.ai_units).toBe(stats.comments);
    } finally {
      await service.stop();
    }
  }, 180_000);

  it('/readyz recovers when space returns with no traffic at all: the space probe, not the next write, clears "full"', async () => {
    const path = join(dir, 'quiet.db');
    await (await openStore(`sqlite:${path}`)).close();
    const db = new Database(path);
    db.exec('CREATE TABLE ballast (b BLOB)');
    for (let i = 0; i < 64; i++) db.prepare('INSERT INTO ballast VALUES (?)').run(Buffer.alloc(32_768));
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.close();
    // Webhooks only: no mailbox polls and nothing is queued, so nothing writes once space returns.
    const config = loadConfig({
      overrides: {
        store: `sqlite:${path}?max_page_count=${pages + 12}`,
        api: { url: emu.url, token: emu.token },
        server: { listen: '127.0.0.1:0', api_keys: [ADMIN] },
        routes: [{ name: 'quiet', source: 'acme/quiet' }],
        adapters: { webhooks: [{ name: 'raw-in', provider: 'raw', route: 'quiet', hmac_secret: SECRET }] },
      } as never,
    });
    const service: Service = await startService(drained(config), { logger: createLogger({ level: 'silent' }) });
    try {
      const { simulator: sim } = await simulator();
      const hook = sim.entryFromSecrets('raw', { hmacSecret: SECRET }, service.url);
      let refused = false;
      for (let i = 0; i < 20 && !refused; i++) {
        const req = sim.request(hook, Buffer.from(big(`quiet-${i}`)), { url: '/webhooks/raw-in', now: Date.now() });
        const res = await fetch(`${service.url}/webhooks/raw-in`, { method: 'POST', headers: req.headers, body: new Uint8Array(req.body) });
        refused = res.status === 503;
      }
      expect(refused).toBe(true);
      expect(service.runtime.store.health().full?.method).toBe('enqueue');
      expect((await fetch(`${service.url}/readyz`)).status).toBe(503);
      const other = new Database(path);
      other.exec('DROP TABLE ballast');
      other.close();
      // No request, no mail: only the probe writes.
      await eventually(async () => (await fetch(`${service.url}/readyz`)).status === 200, '/readyz ready again without traffic', 30_000);
      expect(service.runtime.store.health()).toEqual({});
    } finally {
      await service.stop();
    }
  }, 120_000);
});
