/// <reference lib="dom" />
/**
 * Routes whose delivery is paused (the API refused the token, the source or dataset, a transform
 * tag): a banner above every view, from the `paused` field of GET /api/status, re-read on every
 * status tick of the live stream. Intake goes on while a route is paused; nothing reaches the API.
 */
import { get, url } from './api.js';
import { announceUrgent, byId, clear, h } from './dom.js';
import { ago, when } from './format.js';

export interface RoutePause {
  code: string;
  message: string;
  since: string;
  until?: string;
  target?: string;
}
export interface PausedRoute {
  route: string;
  paused: RoutePause;
}

/**
 * What the operator can do about a pause, by its code: '' when the message says it already (the
 * API client names the resource and what to check for a refused token, permission or target).
 */
export function pauseFix(code: string, target: string | undefined, message = ''): string {
  if (/; (the API refused|the token's account|.* was not found: )/.test(message)) return '';
  // `source:acme/inbound` → `source acme/inbound`
  const what = target ? ` ${target.replace(':', ' ')}` : '';
  switch (code) {
    case 'MAILGATE_ERR_API_UNAUTHORIZED':
      return 'Check api.token (MAILGATE_API_TOKEN): the API does not accept it.';
    case 'MAILGATE_ERR_API_FORBIDDEN':
      return `Give the token's account permission on${what || ' the target'}.`;
    case 'MAILGATE_ERR_API_NOT_FOUND':
      return `Create${what || ' the source or dataset'} in the API, or check the route's name for it and api.url.`;
    case 'MAILGATE_ERR_API_QUOTA':
      return "Raise the project's quota with the service (or wait for it to reset), then resume the route: `mailgate routes resume`.";
    case 'MAILGATE_ERR_API_REQUEST_REJECTED':
      return "Check the route's settings the API refused (transform_tag, the model version).";
    default:
      return 'Fix the cause; delivery tries again on its own.';
  }
}

/** The paused routes of a GET /api/status answer. */
export function pausedRoutes(status: Record<string, unknown> | undefined): PausedRoute[] {
  const routes = status?.['routes'];
  if (!Array.isArray(routes)) return [];
  const out: PausedRoute[] = [];
  for (const r of routes as Array<{ route?: unknown; paused?: unknown }>) {
    const p = r.paused as RoutePause | null | undefined;
    if (typeof r.route === 'string' && p && typeof p === 'object' && typeof p.code === 'string') out.push({ route: r.route, paused: p });
  }
  return out;
}

/** One line of the banner (and of the Overview's route card). */
export function pauseLine(p: PausedRoute): HTMLElement {
  const target = p.paused.target ? ` → ${p.paused.target}` : '';
  return h('li', {}, [
    h('strong', { text: `Route ${p.route}${target}: delivery paused` }),
    ` since ${when(p.paused.since)} (${ago(p.paused.since)}). `,
    h('code', { text: p.paused.code }),
    ` ${p.paused.message}. `,
    h('span', { class: 'fix', text: pauseFix(p.paused.code, p.paused.target, p.paused.message) }),
  ]);
}

/** The routes on the banner and the pause each is in: a change is announced, a re-rendering is not. */
let shownKey = '';

/** Shows (or hides) the banner for these routes. */
export function renderPaused(paused: PausedRoute[]): void {
  const banner = byId('paused');
  const key = paused.map((p) => `${p.route} ${p.paused.code} ${p.paused.since}`).join('\n');
  const changed = key !== shownKey;
  shownKey = key;
  if (!paused.length) {
    banner.hidden = true;
    clear(banner);
    if (changed) announceUrgent('Every route delivers again.');
    return;
  }
  const title = paused.length === 1 ? 'A route cannot deliver' : `${paused.length} routes cannot deliver`;
  clear(
    banner,
    h('p', { class: 'title', text: `${title}: mail is taken in and kept, nothing reaches the API until this is fixed.` }),
    h('ul', {}, paused.map(pauseLine)),
    h('p', { class: 'row' }, [h('a', { href: '#/overview', text: 'Overview' })]),
  );
  banner.hidden = false;
  if (changed) announceUrgent(`${title}: ${paused.map((p) => p.route).join(', ')}.`);
}

/** Re-reads /api/status and updates the banner; the answer, for a caller that shows more of it. */
export async function refreshPaused(): Promise<Record<string, unknown> | undefined> {
  const res = await get<Record<string, unknown>>(url('status'));
  if (!res.ok) return undefined;
  renderPaused(pausedRoutes(res.data));
  return res.data;
}

/** Signed out: the banner goes without a word. */
export function hidePaused(): void {
  shownKey = '';
  byId('paused').hidden = true;
  clear(byId('paused'));
}
