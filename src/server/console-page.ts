/**
 * GET /console (and GET /, which redirects to it): the operator's console — the items the
 * gateway took in, one item in full, the dead letters, an overview, and the preview page's
 * drop zone. One static page; its script is the ES modules under /console/*.js (compiled from
 * page/console/*.ts) plus /preview/app.js for the drop zone. The page holds no data and no
 * secret and is served without a key: every call it makes goes to /api/* with the admin key the
 * operator signs in with (kept in sessionStorage, see docs/console.md).
 *
 * Same policy as the preview page: no script but this server's, no style but the page's own
 * (per-response nonce), no images, frames or forms, and mail content only ever as text.
 */
import type { FastifyInstance } from 'fastify';
import { CONSOLE_STYLE } from './console-style.js';
import { consoleScriptRoutes } from './page/assets.js';
import { dropZoneHtml, sendPage, type PreviewAuthMode } from './preview-page.js';
import { PREVIEW_STYLE } from './preview-style.js';

export const CONSOLE_PATH = '/console';

const NAV: Array<[string, string]> = [
  ['items', 'Items'],
  ['dead', 'Dead letters'],
  ['overview', 'Overview'],
  ['mailboxes', 'Mailboxes'],
  ['drop', 'Drop zone'],
];

const STATES = ['', 'queued', 'retrying', 'delivered', 'unchanged', 'dead'];

function itemsView(): string {
  const states = STATES.map((s) => `<option value="${s}">${s === '' ? 'any' : s}</option>`).join('');
  return `<section id="view-items" class="view" hidden aria-labelledby="items-title">
  <h1 id="items-title">Items</h1>
  <div class="filters" role="search" aria-label="Filter items">
    <p class="field q"><label for="f-q">Search</label>
      <input id="f-q" type="search" autocomplete="off" spellcheck="false" placeholder="subject, sender, message id…"></p>
    <p class="field"><label for="f-state">State</label> <select id="f-state">${states}</select></p>
    <p class="field"><label for="f-route">Route</label> <input id="f-route" type="text" autocomplete="off" spellcheck="false"></p>
    <p class="field"><label for="f-adapter">Adapter</label> <input id="f-adapter" type="text" autocomplete="off" spellcheck="false"></p>
    <p class="field"><label for="f-since">Since</label> <input id="f-since" type="datetime-local"></p>
    <p class="field"><label for="f-until">Until</label> <input id="f-until" type="datetime-local"></p>
    <p class="field actions"><button id="f-apply" type="button">Apply</button>
      <button id="f-reset" type="button" class="secondary">Reset</button></p>
  </div>
  <p class="hint">Keys: <kbd>j</kbd>/<kbd>k</kbd> or arrows to move, <kbd>Enter</kbd> to open, <kbd>Escape</kbd> to come back,
    <kbd>/</kbd> to search.</p>
  <div id="items-list" class="list"></div>
  <p class="row"><button id="items-older" type="button" class="secondary" hidden>Older items</button></p>
</section>`;
}

/** `auth`: how the drop zone calls the preview API; `admin`: whether the admin API has keys at all. */
export function consolePageHtml(nonce: string, auth: PreviewAuthMode, admin: boolean): string {
  const nav = NAV.map(([v, label]) => `<li><a href="#/${v}" data-view="${v}">${label}</a></li>`).join('');
  return `<!doctype html>
<html lang="en" data-auth="${auth}" data-admin="${admin ? 'enabled' : 'disabled'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>mailgate · console</title>
<style nonce="${nonce}">${PREVIEW_STYLE}${CONSOLE_STYLE}</style>
</head>
<body class="console">
<a class="skip" href="#main">Skip to content</a>
<header class="bar">
  <p class="brand">mailgate <span>console</span></p>
  <nav aria-label="Console"><ul>${nav}</ul></nav>
  <p class="session"><span id="live" class="live" role="status" hidden>offline</span>
    <button id="logout" type="button" class="secondary small" hidden>Sign out</button></p>
</header>
<main id="main" tabindex="-1">
<section id="paused" class="paused" aria-label="Paused delivery" hidden></section>
<section id="login" class="view login" hidden aria-labelledby="login-title">
  <h1 id="login-title">Sign in</h1>
  <p>The console reads the admin API. Enter one of the keys of <code>server.api_keys</code>; it is kept in this tab only
    (sessionStorage) and sent as <code>Authorization: Bearer</code>.</p>
  <p class="field"><label for="login-key">Admin API key</label>
    <input id="login-key" type="password" autocomplete="off" spellcheck="false"></p>
  <p class="row"><button id="login-go" type="button">Sign in</button></p>
  <p id="login-error" class="error" hidden></p>
</section>
${itemsView()}
<section id="view-item" class="view" hidden aria-labelledby="item-title">
  <p class="row"><a id="item-back" href="#/items">← Items</a></p>
  <div id="item-body"></div>
</section>
<section id="view-dead" class="view" hidden aria-labelledby="dead-title">
  <h1 id="dead-title">Dead letters</h1>
  <div class="row toolbar">
    <span class="check"><input id="dead-all" type="checkbox"> <label for="dead-all">Select all</label></span>
    <button id="dead-replay" type="button" disabled>Replay selected</button>
    <button id="dead-purge" type="button" class="danger" disabled>Purge selected</button>
    <button id="dead-refresh" type="button" class="secondary">Refresh</button>
  </div>
  <div id="dead-confirm" class="confirm" role="alertdialog" aria-labelledby="dead-confirm-text" hidden>
    <p id="dead-confirm-text"></p>
    <p class="row"><button id="dead-confirm-yes" type="button" class="danger">Confirm</button>
      <button id="dead-confirm-no" type="button" class="secondary">Cancel</button></p>
  </div>
  <div id="dead-list" class="list"></div>
  <p class="row"><button id="dead-more" type="button" class="secondary" hidden>More</button></p>
</section>
<section id="view-overview" class="view" hidden aria-labelledby="overview-title">
  <h1 id="overview-title">Overview</h1>
  <div id="overview-body"></div>
</section>
<section id="view-mailboxes" class="view" hidden aria-labelledby="mailboxes-title">
  <h1 id="mailboxes-title">Mailboxes</h1>
  <p class="hint">Enable or Disable is a command: it wins over the configuration until the next one, on every replica and across restarts.</p>
  <div id="mailboxes-body"></div>
</section>
<section id="view-drop" class="view drop-view" hidden aria-labelledby="drop-title">
  <h1 id="drop-title">Drop zone</h1>
  <p class="hint">See what a message becomes before anything is sent or billed. Nothing you drop here is stored or sent to the API.</p>
${dropZoneHtml()}
</section>
</main>
<p id="announce" class="announce" role="status" aria-live="polite"></p>
<div id="alert" class="announce" role="alert" aria-live="assertive" aria-atomic="false" aria-relevant="additions"></div>
<script type="module" src="/console/app.js"></script>
<script type="module" src="/preview/app.js"></script>
</body>
</html>
`;
}

export function consolePageRoute(auth: PreviewAuthMode, admin: boolean) {
  return async (app: FastifyInstance): Promise<void> => {
    await app.register(consoleScriptRoutes());
    app.get(CONSOLE_PATH, async (_request, reply) => sendPage(reply, (nonce) => consolePageHtml(nonce, auth, admin)));
    app.get('/', async (_request, reply) => reply.redirect(CONSOLE_PATH, 302));
  };
}
