/**
 * The preview page in a real headless Chromium (the system package, never a download):
 * paste and pick messages, read the comment and the document, and make sure a hostile
 * email is shown as text and never runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { app, HOSTILE, KEY, REPLY, SAMPLE } from './support.js';

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
export const SCREENSHOT = '/tmp/mailgate-preview-page.png';
export const THREAD_SCREENSHOT = '/tmp/mailgate-preview-thread.png';

let server: FastifyInstance;
let address: string;
let browser: Browser;

beforeAll(async () => {
  // As `mailgate serve` on a loopback address: the page works under the Host check.
  server = app({ listen_host: '127.0.0.1' }).app;
  address = await server.listen({ host: '127.0.0.1', port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function openPage(): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  await page.goto(`${address}/preview`);
  return { page, problems };
}

describe('preview page', () => {
  it('previews a pasted message: comment beside the exact document', async () => {
    const { page, problems } = await openPage();
    await page.fill('#key', KEY);
    await page.fill('#paste', SAMPLE.replace(/\r\n/g, '\n'));
    await page.click('#go');
    const card = page.locator('article.card').first();
    await card.locator('h2', { hasText: 'Invoice 1234 is wrong' }).waitFor();
    const comment = card.locator('section.comment');
    expect(await comment.locator('.body').first().textContent()).toContain('the amount on invoice 1234 is twice what we agreed.');
    expect(await comment.textContent()).toContain('ann@example.com');
    expect(await comment.textContent()).toContain('2026-03-03T10:15:00.000Z');
    expect(await comment.locator('table').first().textContent()).toContain('string:Sender');
    const json = JSON.parse((await card.locator('pre.json').textContent()) ?? '') as {
      comment_id: string;
      raw_email: { body: { plain: string } };
    };
    expect(json.comment_id).toBe(Buffer.from('<invoice-1234@example.com>').toString('hex'));
    expect(json.raw_email.body.plain).toContain('Please find attached');
    expect(await page.locator('#status').textContent()).toBe('Previewed 1 of 1 message.');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('previews several files together with thread properties across them, and can be driven by keyboard', async () => {
    const { page, problems } = await openPage();
    await page.fill('#key', KEY);
    await page.setInputFiles('#files', [
      { name: 'first.eml', mimeType: 'message/rfc822', buffer: Buffer.from(SAMPLE) },
      { name: 'reply.eml', mimeType: 'message/rfc822', buffer: Buffer.from(REPLY) },
    ]);
    await page.locator('#status', { hasText: 'Previewed 2 of 2 messages.' }).waitFor();
    const cards = page.locator('article.card');
    expect(await cards.count()).toBe(2);
    expect(await cards.nth(0).locator('.file').textContent()).toBe('first.eml');
    const thread = await cards.nth(1).locator('.thread').textContent();
    expect(thread).toContain('Within the 2 messages previewed together');
    expect(thread).toMatch(/thread_position\s*1/);
    expect(thread).toMatch(/num_messages\s*2/);
    expect(thread).toMatch(/response_time\s*1 h 30 min \(5400 s\)/);
    expect(await cards.nth(1).locator('.props').textContent()).toMatch(/number:Position in Thread\s*1\s*generated/);
    await page.screenshot({ path: THREAD_SCREENSHOT, fullPage: true });

    await page.focus('#paste');
    await page.keyboard.type('Subject: typed\n\nhello from the keyboard');
    await page.keyboard.press('Control+Enter');
    await page.locator('article.card h2', { hasText: 'typed' }).waitFor();
    expect(await page.locator('article.card').count()).toBe(3);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a hostile email as text: no script, handler or frame from the message runs', async () => {
    const { page, problems } = await openPage();
    await page.fill('#key', KEY);
    await page.fill('#paste', HOSTILE);
    await page.click('#go');
    const card = page.locator('article.card').first();
    await card.locator('h2', { hasText: '<script>window.__pwned=1</script> urgent' }).waitFor();
    expect(await card.locator('pre.json').textContent()).toContain('<script>window.__pwned=1</script>');
    expect(await card.locator('section.comment').textContent()).toContain('<img src=x onerror=window.__pwned=1>');
    // A string expression: the test is type-checked without the DOM library.
    const dom = await page.evaluate(`({
      pwned: window.__pwned,
      scripts: document.querySelectorAll('script').length,
      inCards: document.querySelectorAll('article img, article iframe, article script, article [onerror]').length,
    })`);
    expect(dom).toEqual({ pwned: undefined, scripts: 1, inCards: 0 });
    expect(problems).toEqual([]);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await page.close();
  });

  it('shows a coded error card for a wrong key', async () => {
    const { page } = await openPage();
    await page.fill('#key', 'wrong-key-wrong-key');
    await page.fill('#paste', SAMPLE);
    await page.click('#go');
    const error = page.locator('article.card .error');
    await error.waitFor();
    expect(await error.textContent()).toContain('MAILGATE_ERR_SERVER_UNAUTHORIZED');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('key');
    await page.close();
  });
});
