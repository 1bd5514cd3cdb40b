/**
 * `mailgate serve` as users run it: the built CLI as a child process, a real Dovecot and an
 * emulator started here. The emulator's billing counter proves exactly-once delivery.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { startEmulator } from '../support/emulator.js';
import { openStore } from '../../src/store/index.js';
import { checkpointKey } from '../../adapters/imap/index.js';
import { startSilentImap } from '../imap/silent-server.js';
import { ADMIN_KEY, countIn as countInFolder, mailbox, serveEnv, unseen, writeConfig } from './imap-serve-setup.js';
import { eventually, killLeftovers, spawnServe } from './serve-process.js';

let dovecot: DovecotServer;
let dir: string;

beforeAll(async () => {
  dovecot = await startDovecot();
  dir = mkdtempSync(join(tmpdir(), 'mailgate-serve-'));
});
afterAll(async () => {
  await dovecot?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

afterEach(killLeftovers);

const countIn = (user: string, folder: string): Promise<number> => countInFolder(dovecot, user, folder);

describe('mailgate serve with IMAP', () => {
  it('syncs a mailbox exactly once, moves only delivered mail, answers probes and metrics, and exits 0 on SIGTERM', async () => {
    const emu = await startEmulator({ autoCreateSources: true, faults: [{ endpoint: 'sync-raw-emails', status: 503, times: 2 }] });
    try {
      const junk = Buffer.from('\x00\x01\x02 binary junk without any header\r\n');
      const { user, pass } = await mailbox(dovecot, 300, [junk]);
      const config = writeConfig(dir, 'sync', dovecot, emu, user, { after_delivery: 'move:Done' });
      const env = serveEnv(emu, pass);
      const serve = spawnServe(['--config', config], { cwd: dir, env });
      const url = await serve.url;
      await eventually(async () => (await countIn(user, 'Done')) === 300, '300 messages moved to Done');
      expect(emu.emulator.stats().comments).toBe(300);
      expect(emu.emulator.stats().ai_units).toBe(300);
      // Only the unparseable message stays in INBOX: it was dead-lettered, never delivered.
      expect(await countIn(user, 'INBOX')).toBe(1);
      const auth = { authorization: `Bearer ${ADMIN_KEY}` };
      const dlq = (await (await fetch(`${url}/api/dlq`, { headers: auth })).json()) as { items?: unknown[] } | unknown[];
      expect(JSON.stringify(dlq)).toContain('MAILGATE_ERR_MIME');

      expect((await fetch(`${url}/livez`)).status).toBe(200);
      const ready = await fetch(`${url}/readyz`);
      const readyBody = (await ready.json()) as { checks: Record<string, { ok: boolean }> };
      expect(ready.status).toBe(200);
      expect(readyBody.checks[`imap:${user}`]?.ok).toBe(true);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toContain(`mailgate_messages_delivered_total{route="support",adapter="imap"} 300`);
      expect(metrics).toContain('mailgate_outbox_depth{route="support"} 0');
      expect(metrics).toMatch(new RegExp(`mailgate_imap_connection_state\\{account="${user}",state="idle"\\} 1`));
      const status = (await (await fetch(`${url}/api/status`, { headers: auth })).json()) as { routes: Array<{ delivered: number }> };
      expect(status.routes[0]!.delivered).toBe(300);
      // Secrets never reach the log.
      expect(serve.stdout() + serve.stderr()).not.toContain(pass);
      expect(serve.stdout()).not.toContain(emu.token);

      serve.child.kill('SIGTERM');
      expect(await serve.exit).toEqual({ code: 0, signal: null });
      expect(serve.stdout()).toContain('"drained":true');
    } finally {
      await emu.stop();
    }
  });

  it('2000 messages through a Dovecot restart mid-sync and an API answering 503: each created once, each moved once', async () => {
    const emu = await startEmulator({ autoCreateSources: true, faults: [{ endpoint: 'sync-raw-emails', status: 503, times: 10 }] });
    try {
      const { user, pass } = await mailbox(dovecot, 2000);
      const config = writeConfig(dir, 'restart', dovecot, emu, user, { after_delivery: 'move:Done' });
      const env = serveEnv(emu, pass);
      const serve = spawnServe(['--config', config], { cwd: dir, env });
      const url = await serve.url;
      await eventually(async () => {
        const m = await (await fetch(`${url}/metrics`)).text();
        const received = Number(/mailgate_messages_received_total\{[^}]*\} (\d+)/.exec(m)?.[1] ?? 0);
        return received >= 200;
      }, 'the first 200 messages read');
      await dovecot.restart();
      await eventually(async () => (await countIn(user, 'Done')) === 2000, '2000 messages moved to Done', 180_000);
      expect(await countIn(user, 'INBOX')).toBe(0);
      expect(emu.emulator.stats().comments).toBe(2000);
      expect(emu.emulator.stats().ai_units).toBe(2000);
      // The restart really cut the account's connection mid-sync, and it came back.
      const status = (await (await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as {
        adapters: Array<{ kind: string; failures?: number; messages?: number }>;
      };
      const imap = status.adapters.find((a) => a.kind === 'imap')!;
      expect(imap.failures).toBeGreaterThanOrEqual(1);
      expect(imap.messages).toBeLessThanOrEqual(2000 + 100);
      serve.child.kill('SIGTERM');
      expect((await serve.exit).code).toBe(0);
    } finally {
      await emu.stop();
    }
  }, 240_000);

  it('killed with SIGKILL mid-sync and restarted: the sync resumes, every comment created and billed once, \\Seen only for delivered mail', async () => {
    const emu = await startEmulator({ autoCreateSources: true, faults: [{ endpoint: 'sync-raw-emails', delay_ms: 150 }] });
    try {
      const total = 400;
      const { user, pass } = await mailbox(dovecot, total);
      // Intake pauses while 50 items are queued: reading stays well behind the mailbox.
      const config = writeConfig(dir, 'kill', dovecot, emu, user, {
        after_delivery: 'seen',
        batch_size: 50,
        delivery: '{ max_documents: 40, flush_ms: 0, max_outbox: 50 }',
      });
      const env = serveEnv(emu, pass);
      const first = spawnServe(['--config', config, '--lease-ms', '1000'], { cwd: dir, env });
      await first.url;
      await eventually(() => emu.emulator.stats().comments >= 40, 'the first comments');
      first.child.kill('SIGKILL');
      expect((await first.exit).signal).toBe('SIGKILL');

      // The kill really came mid-sync: the checkpoint and the outbox stop short of the mailbox.
      const store = await openStore(`sqlite:${join(dir, 'kill', 'mailgate.db')}`);
      const checkpoint = await store.getCheckpoint(checkpointKey(user, 'INBOX'));
      const counts = await store.outboxCounts();
      await store.close();
      const stored = counts.reduce((n, c) => n + c.count, 0);
      expect(checkpoint?.['lastUid']).toBeGreaterThanOrEqual(50);
      expect(checkpoint?.['lastUid']).toBeLessThan(total);
      expect(stored).toBeLessThan(total);
      expect(emu.emulator.stats().comments).toBeLessThan(total);
      // Nothing was marked \Seen that the API had not accepted.
      expect(total - (await unseen(dovecot, user, 'INBOX')).length).toBeLessThanOrEqual(emu.emulator.stats().comments);

      const second = spawnServe(['--config', config, '--lease-ms', '1000'], { cwd: dir, env });
      await second.url;
      await eventually(() => emu.emulator.stats().comments === total, `all ${total} comments`);
      await eventually(async () => (await unseen(dovecot, user, 'INBOX')).length === 0, 'every delivered message marked \\Seen');
      second.child.kill('SIGTERM');
      expect((await second.exit).code).toBe(0);
      // A sync that runs again after a kill may resend a batch the API stored already: the
      // comment ids are deterministic, so nothing is created or billed twice.
      expect(emu.emulator.stats().comments).toBe(total);
      expect(emu.emulator.stats().ai_units).toBe(total);
    } finally {
      await emu.stop();
    }
  }, 240_000);

  it('SIGTERM while the IMAP server never answers the login: exits 0 within the drain bound, not the 300 s command deadline', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    const silent = await startSilentImap();
    try {
      const file = join(dir, 'silent.yaml');
      writeFileSync(
        file,
        [
          `store: sqlite:${join(dir, 'silent', 'mailgate.db')}`,
          `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}" }`,
          'server: { listen: 127.0.0.1:0 }',
          'delivery: { drain_ms: 1000 }',
          'routes: [{ name: support, source: acme/support }]',
          'adapters:',
          '  imap:',
          `    - { name: stuck, route: support, host: 127.0.0.1, port: ${silent.port}, secure: false, auth: { user: u, pass: p }, command_timeout_ms: 300000 }`,
          '',
        ].join('\n'),
      );
      const serve = spawnServe(['--config', file], { cwd: dir, env: { TEST_API_TOKEN: emu.token } });
      await serve.url;
      await eventually(() => silent.asked >= 1, 'the login command', 15_000);
      serve.child.kill('SIGTERM');
      // Drain bound 1 s; the deadline on this wait is generous, the bug it catches is 300 s.
      let exit: { code: number | null } | undefined;
      void serve.exit.then((e) => (exit = e));
      await eventually(() => exit !== undefined, 'the process to exit', 20_000);
      expect(exit!.code).toBe(0);
      expect(serve.stdout()).toContain('mailgate stopped');
    } finally {
      await silent.close();
      await emu.stop();
    }
  });

  it('a second signal exits at once while the drain waits for an unreachable API', async () => {
    const emu = await startEmulator({ autoCreateSources: true, faults: [{ endpoint: 'sync-raw-emails', status: 503 }] });
    try {
      const { user, pass } = await mailbox(dovecot, 20);
      const config = writeConfig(dir, 'second-signal', dovecot, emu, user);
      const env = serveEnv(emu, pass);
      const serve = spawnServe(['--config', config, '--drain-ms', '600000'], { cwd: dir, env });
      const url = await serve.url;
      await eventually(
        async () => (await (await fetch(`${url}/metrics`)).text()).includes('mailgate_outbox_depth{route="support"} 20'),
        '20 queued items',
      );
      serve.child.kill('SIGTERM');
      await eventually(() => serve.stdout().includes('stopping: intake first'), 'the graceful stop to begin');
      serve.child.kill('SIGTERM');
      expect((await serve.exit).code).toBe(1);
      expect(serve.stdout()).toContain('second signal');
      expect(emu.emulator.stats().comments).toBe(0);
    } finally {
      await emu.stop();
    }
  });
});
