/**
 * Every metric family issue 5 names, read from `/metrics` of a real `mailgate serve` process
 * over a real Dovecot and the emulator: received, parsed, queued, delivered, unchanged,
 * rejected and dead-lettered per route and adapter; outbox depth; API requests by status and
 * their latency; IMAP connection state; AI units. And `/api/status` per IMAP account.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { startEmulator } from '../support/emulator.js';
import { textMessage } from '../imap/messages.js';
import { eventually, spawnServe } from './serve-process.js';

let dovecot: DovecotServer;
let dir: string;

beforeAll(async () => {
  dovecot = await startDovecot();
  dir = mkdtempSync(join(tmpdir(), 'mailgate-serve-metrics-'));
});
afterAll(async () => {
  await dovecot?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ADMIN_KEY = 'admin-key-0123456789abcdef';

/** The value of one series in the exposition text, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

interface ImapStatus {
  kind: string;
  name: string;
  state: string;
  healthy: boolean;
  lastError: { code: string; message: string; at: string } | null;
  lastSyncAt: string | null;
  failures: number;
}

describe('mailgate serve /metrics', () => {
  it('exports every family with route/adapter, endpoint/status and account/state labels, each moving', async () => {
    const emu = await startEmulator({ autoCreateSources: true, faults: [{ endpoint: 'sync-raw-emails', status: 503, times: 3 }] });
    try {
      const user = `metrics${process.pid}`;
      const pass = `pw-${user}`;
      await dovecot.addUser(user, pass);
      const junk = Buffer.from('\x00\x01\x02 binary junk without any header\r\n');
      dovecot.fillMaildir(user, 'INBOX', [...Array.from({ length: 30 }, (_, i) => textMessage(i + 1, `metrics ${i + 1}`)), junk]);
      const config = join(dir, 'mailgate.yaml');
      writeFileSync(
        config,
        [
          `store: sqlite:${join(dir, 'data', 'mailgate.db')}`,
          `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}", retry: { base_delay_ms: 50, max_delay_ms: 200 } }`,
          `server: { listen: 127.0.0.1:0, api_keys: ["\${TEST_ADMIN_KEY}"] }`,
          'delivery: { max_documents: 10, flush_ms: 0 }',
          'routes:',
          '  - { name: support, source: acme/support }',
          'adapters:',
          '  imap:',
          `    - { name: ${user}, route: support, host: ${dovecot.host}, port: ${dovecot.port}, secure: false, auth: { user: ${user}, pass: "\${TEST_IMAP_PASS}" }, folders: [INBOX] }`,
          '',
        ].join('\n'),
      );
      const serve = spawnServe(['--config', config], {
        cwd: dir,
        env: { TEST_API_TOKEN: emu.token, TEST_ADMIN_KEY: ADMIN_KEY, TEST_IMAP_PASS: pass },
      });
      const url = await serve.url;
      const metrics = async () => (await fetch(`${url}/metrics`)).text();
      const auth = { authorization: `Bearer ${ADMIN_KEY}` };
      const imapStatus = async () => {
        const s = (await (await fetch(`${url}/api/status`, { headers: auth })).json()) as { adapters: ImapStatus[] };
        return s.adapters.find((a) => a.kind === 'imap' && a.name === user)!;
      };
      const route = '{route="support",adapter="imap"}';

      await eventually(() => emu.emulator.stats().comments === 30, '30 comments');
      // An identical copy of a delivered message: the ledger skips it (unchanged, not billed).
      await dovecot.append(user, 'INBOX', [textMessage(1, 'metrics 1')]);
      await eventually(async () => sample(await metrics(), `mailgate_messages_unchanged_total${route}`) === 1, 'one unchanged document');
      // A new message the API refuses with 422: alone in its batch, it is rejected and dead-lettered.
      emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', status: 422, times: 1 }]);
      await dovecot.append(user, 'INBOX', [textMessage(31, 'metrics 31')]);
      await eventually(async () => sample(await metrics(), `mailgate_messages_rejected_total${route}`) === 1, 'one rejected document');
      await eventually(
        async () => sample(await metrics(), `mailgate_imap_connection_state{account="${user}",state="idle"}`) === 1,
        'the account idling',
      );

      const text = await metrics();
      expect(sample(text, `mailgate_messages_received_total${route}`)).toBe(33);
      expect(sample(text, `mailgate_messages_parsed_total${route}`)).toBe(32);
      expect(sample(text, `mailgate_messages_queued_total${route}`)).toBeGreaterThanOrEqual(32);
      expect(sample(text, `mailgate_messages_delivered_total${route}`)).toBe(30);
      expect(sample(text, `mailgate_messages_unchanged_total${route}`)).toBe(1);
      expect(sample(text, `mailgate_messages_rejected_total${route}`)).toBe(1);
      // The junk message (unparseable) and the rejected one.
      expect(sample(text, `mailgate_messages_dead_lettered_total${route}`)).toBe(2);
      expect(sample(text, 'mailgate_outbox_depth{route="support"}')).toBe(0);
      expect(sample(text, 'mailgate_ai_units_total{route="support"}')).toBe(30);

      const seen = emu.emulator.stats().requests['sync-raw-emails'] ?? {};
      expect(seen['503']).toBe(3);
      expect(seen['422']).toBe(1);
      const sync = (status: string) => sample(text, `mailgate_api_requests_total{endpoint="sync-raw-emails",status="${status}"}`);
      expect(sync('503')).toBe(3);
      expect(sync('422')).toBe(1);
      expect(sync('200')).toBe(seen['200']);
      // Latency by endpoint and status, one observation per attempt.
      // prom-client writes the bucket's `le` first.
      const latency = (series: string, status: string) => {
        const le = series === 'bucket' ? 'le="+Inf",' : '';
        return sample(text, `mailgate_api_request_duration_seconds_${series}{${le}endpoint="sync-raw-emails",status="${status}"}`);
      };
      for (const [status, n] of [
        ['200', seen['200']!],
        ['503', 3],
        ['422', 1],
      ] as const) {
        expect(latency('count', status)).toBe(n);
        expect(latency('bucket', status)).toBe(n);
      }
      expect(latency('sum', '200')).toBeGreaterThan(0);

      expect(sample(text, `mailgate_imap_connection_state{account="${user}",state="idle"}`)).toBe(1);
      for (const state of ['connecting', 'syncing', 'backoff', 'auth_failed', 'stopped']) {
        expect(sample(text, `mailgate_imap_connection_state{account="${user}",state="${state}"}`)).toBe(0);
      }
      expect(text).toContain('# TYPE mailgate_api_request_duration_seconds histogram');

      // /api/status per account: healthy, no error yet, the time of the last complete pass.
      const before = await imapStatus();
      expect(before).toMatchObject({ state: 'idle', healthy: true, lastError: null, failures: 0 });
      expect(Date.parse(before.lastSyncAt!)).not.toBeNaN();
      // The connection cut: the account reports the error, reconnects and syncs again.
      await dovecot.kick(user);
      await eventually(async () => {
        const s = await imapStatus();
        return s.failures >= 1 && s.healthy && s.lastSyncAt !== before.lastSyncAt;
      }, 'the account to reconnect after the cut');
      const after = await imapStatus();
      expect(after.lastError?.code).toMatch(/^MAILGATE_ERR_IMAP_/);
      expect(Date.parse(after.lastError!.at)).not.toBeNaN();

      serve.child.kill('SIGTERM');
      expect((await serve.exit).code).toBe(0);
    } finally {
      await emu.stop();
    }
  }, 180_000);
});
