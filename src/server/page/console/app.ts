/// <reference lib="dom" />
/**
 * The console's entry module (GET /console/app.js): the router over the URL hash — `#/items`
 * (with filters), `#/items/<id>`, `#/dead`, `#/overview`, `#/drop` —, sign-in, and the live
 * event stream that keeps the open view current.
 */
import { currentKey, setKey, whenUnauthorized } from './api.js';
import { setupDead, showDead } from './dead.js';
import { byId, clearUrgent } from './dom.js';
import { itemChanged, showItem } from './item.js';
import { refresh, setupItems, showItems } from './items.js';
import { follow } from './live.js';
import { setupLogin, showLogin } from './login.js';
import { showMailboxes } from './mailboxes.js';
import { showOverview } from './overview.js';
import { hidePaused, refreshPaused } from './paused.js';

const VIEWS = ['items', 'item', 'dead', 'overview', 'mailboxes', 'drop'] as const;
type View = (typeof VIEWS)[number];
const TITLES: Record<View, string> = {
  items: 'Items',
  item: 'Item',
  dead: 'Dead letters',
  overview: 'Overview',
  mailboxes: 'Mailboxes',
  drop: 'Drop zone',
};

let current: View | undefined;
let lastList = '#/items';
let live: AbortController | undefined;

function parse(hash: string): { view: View; id?: number; params: URLSearchParams } {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?');
  const params = new URLSearchParams(query);
  const m = /^items\/(\d{1,15})$/.exec(path);
  if (m) return { view: 'item', id: Number(m[1]), params };
  const view = (VIEWS as readonly string[]).includes(path) && path !== 'item' ? (path as View) : 'items';
  return { view, params };
}

function show(view: View): void {
  byId('login').hidden = true;
  for (const v of VIEWS) byId('view-' + v).hidden = v !== view;
  document.querySelectorAll<HTMLAnchorElement>('.bar nav a').forEach((a) => {
    const on = a.dataset['view'] === view || (view === 'item' && a.dataset['view'] === 'items');
    if (on) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  });
  document.title = `mailgate · ${TITLES[view]}`;
}

/**
 * Shows the view the hash names (the drop zone works without signing in when the preview API is
 * public). `moveFocus`: put the focus on the view's heading — not on the first load, where the
 * skip link comes first.
 */
function route(moveFocus = true): void {
  // Hashes outside the routes (the skip link's `#main`) move the focus, not the view.
  if (current !== undefined && location.hash !== '' && !location.hash.startsWith('#/')) return;
  const needsKey = document.documentElement.getAttribute('data-auth') !== 'open';
  const { view, id, params } = parse(location.hash);
  if (!currentKey() && !(view === 'drop' && !needsKey)) {
    for (const v of VIEWS) byId('view-' + v).hidden = true;
    current = undefined;
    return showLogin();
  }
  const from = current;
  show(view);
  current = view;
  const focus = (id: string): void => {
    if (moveFocus) byId(id).focus();
  };
  if (view === 'items') {
    lastList = location.hash || '#/items';
    showItems(params, false);
    if (from !== 'items' && from !== 'item') focus('items-title');
  } else if (view === 'item' && id !== undefined) void showItem(id);
  else if (view === 'dead') {
    void showDead();
    focus('dead-title');
  } else if (view === 'overview') {
    void showOverview();
    focus('overview-title');
  } else if (view === 'mailboxes') {
    void showMailboxes();
    focus('mailboxes-title');
  } else if (view === 'drop') focus('drop-title');
}

function startLive(): void {
  live?.abort();
  live = new AbortController();
  const badge = byId('live');
  follow(
    live.signal,
    (name, data) => {
      if (name === 'item') {
        const id = (data as { id?: unknown }).id;
        if (current === 'items') void refresh();
        if (typeof id === 'number') itemChanged(id);
        if (current === 'dead') void showDead(true);
      } else if (name === 'status') {
        // The Overview reads /api/status itself (and sets the banner from it).
        if (current === 'overview') void showOverview(true);
        else void refreshPaused();
        if (current === 'mailboxes') void showMailboxes(true);
      }
    },
    (on) => {
      badge.textContent = on ? 'live' : 'offline';
      badge.classList.toggle('on', on);
      // Events sent while the stream was down are lost: catch up once it is back.
      if (on && current === 'items') void refresh();
    },
  );
}

function signedIn(moveFocus = true): void {
  byId('logout').hidden = false;
  byId('live').hidden = false;
  startLive();
  route(moveFocus);
  if (current !== 'overview') void refreshPaused();
}

function signOut(): void {
  live?.abort();
  setKey('');
  byId('logout').hidden = true;
  byId('live').hidden = true;
  hidePaused();
  // What needed the reader (a pause, a refusal) concerned the signed-in session: it goes too.
  clearUrgent();
  route();
}

for (const id of ['items-title', 'overview-title', 'mailboxes-title', 'drop-title']) byId(id).setAttribute('tabindex', '-1');
setupLogin(signedIn);
setupItems();
setupDead();
whenUnauthorized(() => {
  if (currentKey()) signOut();
});
byId('logout').addEventListener('click', signOut);
window.addEventListener('hashchange', () => route(true));
document.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape' && current === 'item' && !(ev.target as HTMLElement).closest('input, textarea, select')) location.hash = lastList;
});
// A file dropped anywhere is previewed (preview/app.js handles the drop): show where the result appears.
document.addEventListener('drop', () => {
  if (current !== 'drop') location.hash = '#/drop';
});
if (currentKey()) {
  setKey(currentKey());
  signedIn(false);
} else route(false);
