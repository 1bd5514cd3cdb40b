/**
 * The console's assertive region (`#alert`) in Chromium against a real `mailgate serve`: what
 * needs the reader now is queued there, not replaced. Regression: a second urgent notice (a
 * download refused) replaced the first (a route paused) before a screen reader had read it, and
 * the same text set twice could go unsaid the second time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { plain } from './mail.js';
import { eventually, launch, signIn, startConsoleServe, watchedPage, type ConsoleServe } from './support.js';

let s: ConsoleServe;
let browser: Browser;

beforeAll(async () => {
  s = await startConsoleServe();
  browser = await launch();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const PAUSED = 'A route cannot deliver: triage.';
const REFUSED = 'NETWORK: TypeError: Failed to fetch';
/** String expressions: the tests are type-checked without the DOM library. */
const JS = {
  said: `window.__said`,
  region: `[...document.getElementById('alert').childNodes].map((n) => n.textContent)`,
};

describe('console: urgent notices', () => {
  it('queues urgent notices: a second one no longer replaces the first, and the same text twice is said twice', async () => {
    // The API's 401 pauses the predict route: the console announces it urgently on sign-in.
    await s.faults([{ endpoint: 'predict-raw-emails', status: 401, times: 1 }]);
    const id = await s.upload(plain('held-1', 'Held while the token is wrong'), 'triage');
    await eventually(async () => {
      const status = await s.api<{ routes: Array<{ route: string; paused: unknown }> }>('status');
      return status.routes.some((r) => r.route === 'triage' && r.paused !== null);
    }, 'the triage route paused');

    const { page, problems } = await watchedPage(browser);
    await signIn(page, s.url, `#/items/${id}`);
    await page.locator('#paused li', { hasText: 'Route triage' }).waitFor();
    const alert = page.locator('#alert');
    await eventually(async () => (await alert.textContent())?.includes(PAUSED) === true, 'the pause said urgently');
    // What the region hands a screen reader from now on: each node added to it.
    await page.evaluate(`window.__said = [];
      new MutationObserver((changes) => { for (const c of changes) for (const n of c.addedNodes) window.__said.push(n.textContent); })
        .observe(document.getElementById('alert'), { childList: true });`);

    // The original cannot be fetched (the connection is refused), twice in a row: two urgent
    // notices with the same text, right behind the pause's.
    await page.route('**/api/items/*/raw', (route) => route.abort('connectionrefused'));
    const download = page.locator('#p-raw-message').locator('xpath=..').locator('button', { hasText: 'Download .eml' });
    await download.click();
    await download.click();
    const said = async (): Promise<string[]> => (await page.evaluate(JS.said)) as string[];
    await eventually(async () => (await said()).length === 2, 'both refusals said', 30_000);
    expect(await said()).toEqual([REFUSED, REFUSED]);
    // Nothing replaced: the pause is still there, then each refusal in a node of its own.
    expect(await page.evaluate(JS.region)).toEqual([PAUSED, REFUSED, REFUSED]);

    // Signed out, what the region said concerned the session: it goes without a word.
    await page.click('#logout');
    await page.locator('#login-key').waitFor();
    expect(await alert.textContent()).toBe('');
    expect(problems.filter((p) => !p.includes('net::ERR_CONNECTION_REFUSED'))).toEqual([]);
    await page.close();
  });
});
