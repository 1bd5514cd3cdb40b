/**
 * Mailbox controls through `mailgate serve` against a real Dovecot: folder and participant
 * filters and skips (counted, never sent), a start time, a mailbox whose password is wrong
 * disabled as sync_error/bad_credentials after its disable_after_ms while its neighbour syncs,
 * disable and enable over the admin API and the CLI across a restart (enabling resumes from the
 * checkpoint), and a quota refusal that pauses the route with nothing dead-lettered until
 * `mailgate routes resume`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runMailgate } from '../cli/support/dist.js';
import { textMessage } from '../imap/messages.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { ADMIN_KEY, metrics, sample } from './imap-serve-setup.js';
import { eventually, killLeftovers, spawnServe } from './serve-process.js';

const auth = { authorization: `Bearer ${ADMIN_KEY}` };
let dovecot: DovecotServer;
let dir: string;
let seq = 0;

beforeAll(async () => {
  dovecot = await startDovecot();
  dir = mkdtempSync(join(tmpdir(), 'mailgate-controls-'));
});
afterAll(async () => {
  await dovecot?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(killLeftovers);

const message = (id: string, from: string, extra: string[] = []) =>
  [`From: ${from}`, 'To: team@corp.example', `Subject: ${id}`, `Message-ID: <${id}@controls.test>`, ...extra, '', `body of ${id}`, ''].join(
    '\r\n',
  );

async function user(): Promise<{ user: string; pass: string }> {
  const u = `ctl${process.pid}x${seq++}`;
  await dovecot.addUser(u, `pw-${u}`);
  return { user: u, pass: `pw-${u}` };
}

interface MailboxView {
  mailbox: string;
  state: string;
  reason: string | null;
  errorKind: string | null;
  byCommand: boolean;
  filtered: number;
  run: string | null;
  folders: Array<{ folder: string; state: string | null; lastSynced: string | null; filtered: number }>;
}

async function mailboxes(url: string): Promise<MailboxView[]> {
  return ((await (await fetch(`${url}/api/mailboxes`, { headers: auth })).json()) as { mailboxes: MailboxView[] }).mailboxes;
}

const account = (name: string, u: string, more: string) =>
  `    - { name: ${name}, route: support, host: ${dovecot.host}, port: ${dovecot.port}, secure: false, auth: { user: ${u}, pass: "\${PASS_${name.toUpperCase()}}" }, idle: false, poll_interval_ms: 1000, resync_interval_ms: 1000${more} }`;

function config(name: string, emu: StartedEmulator, accounts: string[]): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `store: sqlite:${join(dir, name, 'mailgate.db')}`,
      `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}", retry: { base_delay_ms: 50, max_delay_ms: 200 } }`,
      `server: { listen: 127.0.0.1:0, api_keys: ["\${TEST_ADMIN_KEY}"] }`,
      'mailboxes: { check_ms: 200 }',
      'delivery: { max_documents: 40, flush_ms: 0 }',
      'routes:',
      '  - { name: support, source: acme/support }',
      'adapters:',
      '  imap:',
      ...accounts,
      '',
    ].join('\n'),
  );
  return file;
}

describe('mailbox controls through mailgate serve', () => {
  it('filters and a start time leave mail out (counted, never sent); a failing mailbox is disabled while its neighbour syncs', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    try {
      const flt = await user();
      dovecot.fillMaildir(flt.user, 'INBOX', [
        message('keep-1', 'client@client.example'),
        message('keep-2', 'Client <other@client.example>'),
        message('news-1', 'news@newsletter.example'),
        message('news-2', 'team@corp.example', ['Cc: digest@newsletter.example']),
        message('ooo-1', 'client@client.example', ['Auto-Submitted: auto-replied']),
        message('list-1', 'dev@lists.example', ['List-Id: <dev.lists.example>']),
      ]);
      // Dovecot separates levels with '.': the patterns use '/' all the same.
      await dovecot.createFolder(flt.user, 'Archive');
      await dovecot.createFolder(flt.user, 'Old.2024');
      dovecot.fillMaildir(flt.user, 'Old.2024', [message('archived-1', 'client@client.example')]);
      const late = await user();
      dovecot.fillMaildir(late.user, 'INBOX', [message('old-1', 'a@client.example'), message('old-2', 'b@client.example')]);
      const bad = await user();
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      const file = config('filters', emu, [
        account(
          'flt',
          flt.user,
          ', folders: ["*"], exclude_folders: ["Old/**"], participants: { deny: ["*@newsletter.example"] }, skip: [auto_replies, mailing_lists]',
        ),
        account('late', late.user, `, since: "${tomorrow}"`),
        account('bad', bad.user, ', disable_after_ms: 1000'),
      ]);
      const env = {
        TEST_API_TOKEN: emu.token,
        TEST_ADMIN_KEY: ADMIN_KEY,
        PASS_FLT: flt.pass,
        PASS_LATE: late.pass,
        PASS_BAD: 'not-the-password',
      };
      const serve = spawnServe(['--config', file], { cwd: dir, env });
      const url = await serve.url;
      await eventually(async () => emu.emulator.stats().comments === 2, 'the two kept messages delivered');
      // The start time: mail already there is never read; mail arriving later is.
      await dovecot.deliver(late.user, 'INBOX', message('new-1', 'c@client.example'));
      await eventually(async () => emu.emulator.stats().comments === 3, 'the message that arrived after the start delivered');
      await eventually(async () => (await mailboxes(url)).find((m) => m.mailbox === 'imap:flt')?.filtered === 4, 'four counted');
      const text = await metrics(url);
      expect(sample(text, 'mailgate_messages_filtered_total{route="support",adapter="imap",reason="participants"}')).toBe(2);
      expect(sample(text, 'mailgate_messages_filtered_total{route="support",adapter="imap",reason="auto_reply"}')).toBe(1);
      expect(sample(text, 'mailgate_messages_filtered_total{route="support",adapter="imap",reason="mailing_list"}')).toBe(1);
      // Never parsed, never stored: only the delivered ones are items.
      expect(sample(text, 'mailgate_messages_received_total{route="support",adapter="imap"}')).toBe(3);

      await eventually(async () => {
        const b = (await mailboxes(url)).find((m) => m.mailbox === 'imap:bad');
        return b?.state === 'disabled' && b.reason === 'sync_error' && b.errorKind === 'bad_credentials';
      }, 'the mailbox with the wrong password disabled');
      const views = await mailboxes(url);
      const f = views.find((m) => m.mailbox === 'imap:flt')!;
      expect(f).toMatchObject({ state: 'enabled', run: 'running' });
      expect(f.folders.map((x) => x.folder).sort()).toEqual(['Archive', 'INBOX']);
      expect(f.folders.find((x) => x.folder === 'INBOX')).toMatchObject({ state: 'up_to_date', filtered: 4 });
      expect(views.find((m) => m.mailbox === 'imap:bad')?.run).toBe('disabled');
      const status = (await (await fetch(`${url}/api/status`, { headers: auth })).json()) as { mailboxes: MailboxView[] };
      expect(status.mailboxes.map((m) => m.mailbox)).toEqual(['imap:bad', 'imap:flt', 'imap:late']);
      expect(JSON.stringify(emu.emulator.stats())).not.toContain('newsletter');
      serve.child.kill('SIGTERM');
      expect((await serve.exit).code).toBe(0);
    } finally {
      await emu.stop();
    }
  });

  it('disable and enable by API and CLI win over the configuration across a restart; enabling resumes from the checkpoint', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    try {
      const one = await user();
      dovecot.fillMaildir(one.user, 'INBOX', [textMessage(1, 'first'), textMessage(2, 'second')]);
      const file = config('states', emu, [account('one', one.user, '')]);
      const env = { TEST_API_TOKEN: emu.token, TEST_ADMIN_KEY: ADMIN_KEY, PASS_ONE: one.pass };
      let serve = spawnServe(['--config', file], { cwd: dir, env });
      let url = await serve.url;
      await eventually(async () => emu.emulator.stats().comments === 2, 'the first two delivered');
      const off = await fetch(`${url}/api/mailboxes/${encodeURIComponent('imap:one')}/disable`, { method: 'POST', headers: auth });
      expect(off.status).toBe(200);
      await eventually(async () => (await mailboxes(url))[0]?.run === 'disabled', 'the adapter stopped');
      expect((await fetch(`${url}/api/mailboxes/imap%3Anope/enable`, { method: 'POST', headers: auth })).status).toBe(404);
      serve.child.kill('SIGTERM');
      await serve.exit;

      // Disabled by command survives the restart: the new message is not read.
      dovecot.fillMaildir(one.user, 'INBOX', [textMessage(3, 'third')]);
      serve = spawnServe(['--config', file], { cwd: dir, env });
      url = await serve.url;
      await eventually(async () => (await mailboxes(url))[0]?.run === 'disabled', 'still disabled after the restart');
      expect((await mailboxes(url))[0]).toMatchObject({ state: 'disabled', reason: 'user', byCommand: true });
      const store = `sqlite:${join(dir, 'states', 'mailgate.db')}`;
      const listed = await runMailgate(['mailboxes', 'list', '--store', store]);
      expect(listed.stdout).toContain('imap:one: DISABLED (user) by command');
      const on = await runMailgate(['mailboxes', 'enable', 'imap:one', '--store', store]);
      expect(on.code).toBe(0);
      await eventually(async () => emu.emulator.stats().comments === 3, 'the third delivered once enabled');
      // Resumed from the checkpoint: the first two were not sent again.
      expect(emu.emulator.stats().ai_units).toBe(3);
      serve.child.kill('SIGTERM');
      await serve.exit;
    } finally {
      await emu.stop();
    }
  });

  it('a quota refusal pauses the route with nothing dead-lettered, and `mailgate routes resume` lifts it', async () => {
    const emu = await startEmulator({
      autoCreateSources: true,
      faults: [{ endpoint: 'sync-raw-emails', status: 402, message: 'CommentQuotaHit: the project has reached its comment quota' }],
    });
    try {
      const one = await user();
      dovecot.fillMaildir(one.user, 'INBOX', [textMessage(1, 'quota one'), textMessage(2, 'quota two')]);
      const file = config('quota', emu, [account('one', one.user, '')]);
      const env = { TEST_API_TOKEN: emu.token, TEST_ADMIN_KEY: ADMIN_KEY, PASS_ONE: one.pass };
      const serve = spawnServe(['--config', file], { cwd: dir, env });
      const url = await serve.url;
      type Route = { route: string; paused: { code: string; message: string } | null };
      const routes = async () => ((await (await fetch(`${url}/api/status`, { headers: auth })).json()) as { routes: Route[] }).routes;
      await eventually(async () => (await routes())[0]?.paused?.code === 'MAILGATE_ERR_API_QUOTA', 'the route paused for quota');
      expect((await routes())[0]?.paused?.message).toContain('CommentQuotaHit');
      const dlq = (await (await fetch(`${url}/api/dlq`, { headers: auth })).json()) as { items: unknown[] };
      expect(dlq.items).toEqual([]);
      const store = `sqlite:${join(dir, 'quota', 'mailgate.db')}`;
      const status = await runMailgate(['status', '--store', store]);
      expect(status.stdout).toContain('PAUSED');
      emu.emulator.setFaults([]);
      const resumed = await runMailgate(['routes', 'resume', 'support', '--store', store]);
      expect(resumed.stdout).toContain('support: resumed');
      await eventually(async () => emu.emulator.stats().comments === 2, 'both delivered once resumed');
      expect((await routes())[0]?.paused).toBeNull();
      serve.child.kill('SIGTERM');
      await serve.exit;
    } finally {
      await emu.stop();
    }
  });
});
