/**
 * GET /preview: one page (inline CSS, its script from GET /preview/app.js, nothing from
 * elsewhere) where an analyst drops, picks or pastes .eml files and sees, per message, the
 * comment as the service would show it next to the exact JSON document that would be sent.
 *
 * The page holds no data and is served without a key; the preview API it calls follows
 * the server's auth mode. Message content is only ever inserted with textContent, and the
 * CSP allows no script but this server's and no style but the page's own (per-response nonce).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { previewScriptRoute } from './page/assets.js';
import { PREVIEW_STYLE } from './preview-style.js';

/** `key`: the API needs an admin key; `open`: no key needed; `disabled`: no keys configured and the preview is not public. */
export type PreviewAuthMode = 'key' | 'open' | 'disabled';

export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The drop zone: inputs, status line and results; shared by the preview page and the console. */
export function dropZoneHtml(): string {
  return `  <section class="input" aria-label="Messages to preview">
    <div class="options">
      <p id="key-row" class="field"><label for="key">Admin API key</label>
        <input id="key" type="password" autocomplete="off" spellcheck="false"></p>
      <p class="field"><label for="route">Route (optional)</label>
        <input id="route" type="text" autocomplete="off" spellcheck="false" placeholder="support"></p>
    </div>
    <div id="drop" class="drop">
      <p><strong>Drop .eml files here</strong> or</p>
      <label class="button" for="files">Choose files…</label>
      <input id="files" type="file" multiple accept=".eml,message/rfc822,text/plain">
    </div>
    <div class="paste">
      <label for="paste">Or paste one raw message (headers, blank line, body)</label>
      <textarea id="paste" rows="8" spellcheck="false" placeholder="From: Ann &lt;ann@example.com&gt;&#10;Subject: Hello&#10;&#10;Hi there"></textarea>
      <div class="row">
        <button id="go" type="button">Preview pasted message</button>
        <span class="hint">Ctrl+Enter</span>
        <button id="clear" type="button" class="secondary">Clear results</button>
      </div>
    </div>
    <p id="auth-note" class="note" hidden></p>
  </section>
  <p id="status" class="status" role="status" aria-live="polite"></p>
  <section id="results" class="results" aria-label="Previews"></section>
`;
}

export function previewPageHtml(nonce: string, auth: PreviewAuthMode): string {
  return `<!doctype html>
<html lang="en" data-auth="${auth}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>mailgate · preview</title>
<style nonce="${nonce}">${PREVIEW_STYLE}</style>
</head>
<body>
<header class="top">
  <h1>mailgate preview</h1>
  <p>See what a message becomes before anything is sent or billed. Nothing you drop here is stored or sent to the API.</p>
</header>
<main>
${dropZoneHtml()}</main>
<script type="module" src="preview/app.js"></script>
</body>
</html>
`;
}

/** Answers with a page whose inline style carries a fresh nonce, under the strict CSP, never cached. */
export function sendPage(reply: FastifyReply, html: (nonce: string) => string): FastifyReply {
  const nonce = randomBytes(18).toString('base64');
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', contentSecurityPolicy(nonce))
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .send(html(nonce));
}

export function previewPageRoute(auth: PreviewAuthMode) {
  return async (app: FastifyInstance): Promise<void> => {
    await app.register(previewScriptRoute());
    app.get('/preview', async (_request, reply) => sendPage(reply, (nonce) => previewPageHtml(nonce, auth)));
  };
}
