/**
 * GET /console (the page), GET / (a redirect to it), its ES modules under /console/*.js, and
 * the event-stream parser its live view reads with. The page in a browser: test/console/.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONSOLE_MODULES, pageScriptFile } from '../../src/server/page/assets.js';
import { sseParser } from '../../src/server/page/console/sse.js';
import { CONSOLE_STYLE } from '../../src/server/console-style.js';
import { PREVIEW_STYLE } from '../../src/server/preview-style.js';
import { app } from './support.js';

describe('GET /console', () => {
  it('is one page under the strict CSP, its scripts from this server only, telling the page the auth modes', async () => {
    const modes: Array<[Parameters<typeof app>[0], string, string]> = [
      [{}, 'key', 'enabled'],
      [{ api_keys: [] }, 'disabled', 'disabled'],
      [{ public_preview: true }, 'open', 'enabled'],
    ];
    for (const [options, auth, admin] of modes) {
      const { app: a } = app(options);
      const res = await a.inject('/console');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toContain(`<html lang="en" data-auth="${auth}" data-admin="${admin}">`);
      const csp = String(res.headers['content-security-policy']);
      const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1];
      expect(nonce).toBeDefined();
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("img-src 'none'");
      expect(res.body.match(/<script[^>]*>/g)).toEqual([
        '<script type="module" src="/console/app.js">',
        '<script type="module" src="/preview/app.js">',
      ]);
      expect(res.body.match(/<style[^>]*>/g)).toEqual([`<style nonce="${nonce}">`]);
      // Links stay inside the page: the skip link and the hash routes.
      expect(res.body.match(/\shref="[^"]*"/g)).toEqual([
        ' href="#main"',
        ' href="#/items"',
        ' href="#/dead"',
        ' href="#/overview"',
        ' href="#/mailboxes"',
        ' href="#/drop"',
        ' href="#/items"',
      ]);
      // Landmarks and labels: every input and select has a label.
      expect(res.body).toMatch(/<nav aria-label="Console">/);
      expect(res.body).toMatch(/<main id="main"/);
      for (const [, id] of res.body.matchAll(/<(?:input|select|textarea) id="([^"]+)"/g)) expect(res.body).toContain(`for="${id}"`);
      await a.close();
    }
  });

  it('GET / redirects to it; /preview still answers', async () => {
    const { app: a } = app();
    const root = await a.inject('/');
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/console');
    expect((await a.inject('/preview')).statusCode).toBe(200);
    await a.close();
  });

  it('serves each compiled module (and nothing else under /console/) as a revalidated script with no markup sinks', async () => {
    const { app: a } = app();
    for (const name of CONSOLE_MODULES) {
      const res = await a.inject(`/console/${name}.js`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toBe(readFileSync(pageScriptFile(`console/${name}.js`), 'utf8').replace(/\/\/# sourceMappingURL=\S+\s*$/, ''));
      expect(res.body).not.toMatch(/\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|\beval\(|new Function/);
      // Imports are relative modules that are served too.
      for (const [, dep] of res.body.matchAll(/^import [^;]+ from '\.\/([a-z]+)\.js';$/gm)) expect(CONSOLE_MODULES).toContain(dep);
      const again = await a.inject({ url: `/console/${name}.js`, headers: { 'if-none-match': String(res.headers.etag) } });
      expect(again.statusCode).toBe(304);
    }
    expect((await a.inject('/console/preview.js')).statusCode).toBe(404);
    expect((await a.inject('/console/../preview/app.js')).statusCode).not.toBe(500);
    await a.close();
  });
});

describe('sseParser', () => {
  function parse(chunks: string[]): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    const feed = sseParser((name, data) => out.push([name, data]));
    chunks.forEach(feed);
    return out;
  }

  it('splits named events, joins data lines, skips comments and empty events', () => {
    expect(parse([': keep-alive\n\nevent: item\ndata: {"id":1}\n\ndata: a\ndata: b\n\n'])).toEqual([
      ['item', '{"id":1}'],
      ['message', 'a\nb'],
    ]);
  });

  it('reads the same events whatever the chunking and line endings (a CRLF split across chunks included)', () => {
    const text = 'event: item\r\ndata: {"id":2}\r\n\r\nevent: status\rdata: x\r\r\n';
    const expected = [
      ['item', '{"id":2}'],
      ['status', 'x'],
    ];
    expect(parse([text])).toEqual(expected);
    expect(parse(text.split(''))).toEqual(expected);
    expect(parse(['event: item\r', '\ndata: {"id":2}\r', '\n\r', '\n'])).toEqual([expected[0]]);
  });
});

describe('console colours', () => {
  /** The custom properties of a scheme: the light `:root` block, or the one inside the dark media query. */
  function palette(dark: boolean): Record<string, string> {
    const vars: Record<string, string> = {};
    for (const css of [PREVIEW_STYLE, CONSOLE_STYLE]) {
      const blocks = [...css.matchAll(/(@media \(prefers-color-scheme: dark\) \{ )?:root \{([^}]*)\}/g)];
      for (const [, isDark, body] of blocks) {
        if (Boolean(isDark) !== dark) continue;
        for (const [, name, value] of body!.matchAll(/--([a-z-]+):\s*(#[0-9a-f]{3,6})/g)) vars[name!] = value!;
      }
    }
    return vars;
  }
  function luminance(hex: string): number {
    const full = hex.length === 4 ? '#' + [...hex.slice(1)].map((c) => c + c).join('') : hex;
    const [r, g, b] = [1, 3, 5].map((i) => {
      const c = parseInt(full.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  }
  function contrast(a: string, b: string): number {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi! + 0.05) / (lo! + 0.05);
  }

  it('keeps text at a contrast of at least 4.5:1 on the backgrounds it is drawn on, in both schemes', () => {
    // [text, background] pairs as the stylesheet uses them; `on-accent`: the text of filled buttons.
    const pairs = [
      ['fg', 'bg'],
      ['fg', 'card'],
      ['muted', 'bg'],
      ['muted', 'card'],
      ['accent', 'bg'],
      ['accent', 'card'],
      ['on-accent', 'accent'],
      ['on-accent', 'danger'],
      ['danger', 'card'],
      ['danger', 'sel'],
      ['ok', 'card'],
      ['ok', 'sel'],
      ['fg', 'sel'],
      ['muted', 'sel'],
      ['accent', 'sel'],
      ['err-fg', 'err-bg'],
      ['warn-fg', 'warn-bg'],
      ['fg', 'sig'],
      ['accent', 'sig'],
      ['fg', 'code'],
    ];
    for (const dark of [false, true]) {
      const p: Record<string, string> = { ...palette(dark), 'on-accent': dark ? '#0d1117' : '#ffffff' };
      for (const [text, back] of pairs) {
        expect(p[text!], `--${text} (${dark ? 'dark' : 'light'})`).toBeDefined();
        expect(p[back!], `--${back} (${dark ? 'dark' : 'light'})`).toBeDefined();
        expect(contrast(p[text!]!, p[back!]!), `${text} on ${back} (${dark ? 'dark' : 'light'})`).toBeGreaterThanOrEqual(4.5);
      }
    }
  });
});
