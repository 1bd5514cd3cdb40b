/**
 * The console's Mailboxes view in Chromium, against `mailgate serve` reading two IMAP accounts
 * on a real Dovecot: one row a mailbox with its folders under it (sync state, filtered count),
 * a mailbox whose password is wrong shown disabled with its reason and error kind, and the
 * Disable / Enable buttons acting as commands. Screenshots go to docs/console/.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe, type ServeProcess } from '../service/serve-process.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { ADMIN_KEY, eventually, launch, screenshot, signIn, watchedPage } from './support.js';

let dovecot: DovecotServer;
let browser: Browser;
let dir: string;
let serve: ServeProcess;
let url: string;

const message = (id: string, from: string, extra: string[] = []) =>
  [`From: ${from}`, 'To: support@corp.example', `Subject: ${id}`, `Message-ID: <${id}@console.test>`, ...extra, '', `body ${id}`, ''].join(
    '\r\n',
  );

beforeAll(async () => {
  dovecot = await startDovecot();
  browser = await launch();
  dir = mkdtempSync(join(tmpdir(), 'mailgate-console-mailboxes-'));
  const user = `cmb${process.pid}`;
  await dovecot.addUser(user, 'right-password');
  dovecot.fillMaildir(user, 'INBOX', [
    message('hello', 'client@client.example'),
    message('list', 'dev@lists.example', ['List-Id: <dev.lists.example>']),
    message('news', 'news@newsletter.example'),
  ]);
  await dovecot.createFolder(user, 'Sent');
  await dovecot.addUser(`${user}b`, 'right-password');
  const account = (name: string, login: string, pass: string, more: string) =>
    `    - { name: ${name}, route: inbound, host: ${dovecot.host}, port: ${dovecot.port}, secure: false, auth: { user: ${login}, pass: ${pass} }, idle: false, poll_interval_ms: 1000${more} }`;
  const config = join(dir, 'mailgate.yaml');
  writeFileSync(
    config,
    [
      `store: sqlite:${join(dir, 'data', 'mailgate.db')}`,
      `server: { listen: 127.0.0.1:0, api_keys: [${ADMIN_KEY}] }`,
      'mailboxes: { check_ms: 200 }',
      'delivery: { flush_ms: 0 }',
      'routes:',
      '  - { name: inbound, source: acme/inbound }',
      'adapters:',
      '  imap:',
      account(
        'support',
        user,
        'right-password',
        ', folders: [INBOX, Sent], skip: [mailing_lists], participants: { deny: ["*@newsletter.example"] }',
      ),
      account('sales', `${user}b`, 'wrong-password', ', disable_after_ms: 1000'),
      '',
    ].join('\n'),
  );
  serve = spawnServe(['--config', config], { cwd: dir });
  url = await serve.url;
});
afterAll(async () => {
  serve?.child.kill('SIGTERM');
  await serve?.exit;
  await browser?.close();
  await dovecot?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('console: Mailboxes', () => {
  it('shows each mailbox with its folders, a disabled one with its reason, and disables and enables by command', async () => {
    const { page, problems } = await watchedPage(browser);
    await signIn(page, url, '#/mailboxes');
    const row = (name: string) => page.locator(`tr.mailbox[data-mailbox="imap:${name}"]`);
    await eventually(async () => {
      await page.click('a[data-view="mailboxes"]');
      return /disabled\s+sync error · bad credentials/.test((await row('sales').textContent()) ?? '');
    }, 'the account with the wrong password disabled');
    await eventually(async () => {
      await page.goto(`${url}/console#/overview`);
      await page.goto(`${url}/console#/mailboxes`);
      await row('support').waitFor();
      return (await page.locator('table.mailboxes').textContent())?.includes('up to date') === true;
    }, 'the folders of the good account up to date');
    expect(await row('support').textContent()).toMatch(/imap:supportenabled\s*2/);
    expect(await row('sales').textContent()).toContain('MAILGATE_ERR_IMAP_AUTH');
    const folders = await page.locator('tr.folder th').allTextContents();
    expect(folders).toEqual(['INBOX', 'Sent']);
    await screenshot(page, 'mailboxes');

    await page.click('button[aria-label="Disable imap:support"]');
    await row('support').locator('.state.dead').waitFor();
    expect(await row('support').textContent()).toContain('by an operator');
    expect(await page.locator('#announce').textContent()).toBe('imap:support disabled.');
    await screenshot(page, 'mailboxes-disabled');
    await page.click('button[aria-label="Enable imap:support"]');
    await row('support').locator('.state.delivered').waitFor();
    const states = (await fetch(`${url}/api/mailboxes`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json())) as {
      mailboxes: Array<{ mailbox: string; state: string; byCommand: boolean }>;
    };
    expect(states.mailboxes.find((m) => m.mailbox === 'imap:support')).toMatchObject({ state: 'enabled', byCommand: true });
    expect(problems).toEqual([]);
    await page.close();
  });
});
