/**
 * A real `mailgate serve` (built CLI, built-in emulator, SQLite) with two upload endpoints (a
 * sync route and a predict route), and Debian's Chromium driven by playwright-core, for the
 * console's browser tests. `npm run build` must have run.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { eventually, killLeftovers, ROOT, spawnServe, type ServeProcess } from '../service/serve-process.js';

export const ADMIN_KEY = 'console-admin-key-0123456789';
const UPLOAD_KEY = 'console-upload-key-0123456789';
export const SCREENSHOTS = join(ROOT, 'docs', 'console');
const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface ConsoleServe {
  url: string;
  emulator: string;
  serve: ServeProcess;
  /**
   * Stores one raw message through the upload endpoint of `route` (`inbound` or `triage`); its
   * item id. With `file`, as that file of a multipart upload (its origin then names the file).
   */
  upload(raw: string, route?: 'inbound' | 'triage', file?: string): Promise<number>;
  /** GET /api/<path> with the admin key. */
  api<T>(path: string): Promise<T>;
  /** Replaces the built-in emulator's fault plan. */
  faults(rules: unknown[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startConsoleServe(): Promise<ConsoleServe> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-console-'));
  mkdirSync(join(dir, 'data'));
  const config = join(dir, 'mailgate.yaml');
  writeFileSync(
    config,
    [
      `store: sqlite:${join(dir, 'data', 'mailgate.db')}`,
      `server: { listen: 127.0.0.1:0, api_keys: [${ADMIN_KEY}] }`,
      'delivery: { flush_ms: 0 }',
      'routes:',
      '  - { name: inbound, source: acme/inbound }',
      '  - { name: triage, mode: predict, dataset: acme/triage }',
      'adapters:',
      '  upload:',
      `    - { name: uploads, route: inbound, api_keys: [${UPLOAD_KEY}] }`,
      `    - { name: triage-uploads, route: triage, api_keys: [${UPLOAD_KEY}] }`,
      '  smtp:',
      "    - { name: mx, route: inbound, listen: '127.0.0.1:0', recipients: [{ match: '*' }] }",
      '',
    ].join('\n'),
  );
  const serve = spawnServe(['--config', config], { cwd: dir });
  const url = await serve.url;
  const emulator = /BUILT-IN EMULATOR at (http:\/\/\S+)/.exec(serve.stderr())?.[1];
  if (!emulator) throw new Error(`no built-in emulator announced:\n${serve.stderr()}`);
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}/api/${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    if (!res.ok) throw new Error(`GET /api/${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    url,
    emulator,
    serve,
    api,
    async upload(raw, route = 'inbound', file) {
      const name = route === 'inbound' ? 'uploads' : 'triage-uploads';
      const form = new FormData();
      if (file !== undefined) form.append('file', new Blob([raw], { type: 'message/rfc822' }), file);
      const res = await fetch(`${url}/api/upload/${name}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${UPLOAD_KEY}`, ...(file === undefined ? { 'content-type': 'message/rfc822' } : {}) },
        body: file === undefined ? raw : form,
      });
      const body = (await res.json()) as { results: Array<{ item: string }> };
      if (!res.ok || !body.results[0]) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
      return Number(body.results[0].item);
    },
    async faults(rules) {
      const res = await fetch(`${emulator}/_emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules }),
      });
      if (!res.ok) throw new Error(`faults: ${res.status} ${await res.text()}`);
    },
    async stop() {
      serve.child.kill('SIGTERM');
      await serve.exit;
      killLeftovers();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until the stored item is `status` (`queued`, `delivered`, `dead`: GET /api/preview/:id). */
export async function storedAs(s: ConsoleServe, id: number, status: string): Promise<void> {
  await eventually(async () => (await s.api<{ status: string }>(`preview/${id}`)).status === status, `item ${id} ${status}`);
}

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

export interface Watched {
  page: Page;
  /** Page errors, console errors, dialogs and CSP violations seen so far. */
  problems: string[];
}

/**
 * A page that records every script error, console error, dialog (alert/confirm/prompt) and CSP
 * violation. The listener is installed by the browser before any page script runs (an init
 * script is not subject to the page's CSP), so a violation at load time is seen too.
 */
export async function watchedPage(browser: Browser, size = { width: 1280, height: 800 }): Promise<Watched> {
  const page = await browser.newPage({ viewport: size });
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/Failed to load resource: the server responded with a status of 40[14]/.test(msg.text()))
      problems.push(`console: ${msg.text()}`);
  });
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  await page.exposeFunction('__reportViolation', (v: string) => problems.push(`csp: ${v}`));
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (e) =>
    window.__reportViolation(e.violatedDirective + ' ' + e.blockedURI));`);
  return { page, problems };
}

/** Signs in on the console's sign-in form. */
export async function signIn(page: Page, url: string, hash = '#/items'): Promise<void> {
  await page.goto(`${url}/console${hash}`);
  await page.fill('#login-key', ADMIN_KEY);
  await page.press('#login-key', 'Enter');
  await page.locator('#login').waitFor({ state: 'hidden' });
}

/**
 * Takes the view's screenshot; it replaces docs/console/<name>.png only with
 * MAILGATE_CONSOLE_SCREENSHOTS=1 (`npm run docs:console`), so that a test run leaves the docs as they are.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env['MAILGATE_CONSOLE_SCREENSHOTS'] !== '1') {
    await page.screenshot({ fullPage: false });
    return;
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false });
}

export { eventually };
