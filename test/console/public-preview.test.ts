/**
 * The console on a server whose preview API is public (`server.public_preview`): the drop zone
 * works without signing in, every other view still asks for the admin key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { app, SAMPLE } from '../server/support.js';
import { launch, watchedPage } from './support.js';

let server: FastifyInstance;
let address: string;
let browser: Browser;

beforeAll(async () => {
  server = app({ public_preview: true, listen_host: '127.0.0.1' }).app;
  address = await server.listen({ host: '127.0.0.1', port: 0 });
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('console with a public preview', () => {
  it('previews in the drop zone without a key; the items still need one', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.goto(`${address}/console#/drop`);
    await page.locator('#view-drop').waitFor();
    expect(await page.locator('#login').isVisible()).toBe(false);
    expect(await page.locator('#key').isVisible()).toBe(false);
    await page.fill('#paste', SAMPLE.replace(/\r\n/g, '\n'));
    await page.click('#go');
    await page.locator('article.card h2', { hasText: 'Invoice 1234 is wrong' }).waitFor();
    await page.click('nav a[href="#/items"]');
    await page.locator('#login').waitFor();
    expect(await page.locator('#view-items').isVisible()).toBe(false);
    expect(problems).toEqual([]);
    await page.close();
  });
});
