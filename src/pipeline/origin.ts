/** Helpers tying an origin to its outbox key, its route's target and its route properties. */
import type { RouteConfig } from '../config/schema.js';
import type { UserProperties } from '../model/index.js';
import type { Origin } from './types.js';

/**
 * The idempotency key of a message within its route. Re-reading the same message from the
 * same place (a re-run import, an IMAP re-fetch) yields the same key, so it is stored once.
 */
export function keyFor(origin: Origin): string {
  switch (origin.adapter) {
    case 'files':
      return `files:${origin.path ?? ''}:${origin.index ?? 0}`;
    case 'imap':
      return `imap:${origin.account ?? ''}:${origin.folder ?? ''}:${origin.uidValidity ?? 0}:${origin.uid ?? 0}`;
    default:
      return `${origin.adapter}:${origin.account ?? ''}:${origin.eventId ?? origin.path ?? ''}:${origin.index ?? 0}`;
  }
}

/**
 * The outbox key of a message: its origin's key within the route's target. The same message
 * read again for the same target is stored once; for another target (a route pointed at a new
 * source, an import into a second source) it is new.
 */
export function outboxKey(route: RouteConfig, origin: Origin): string {
  return `${keyFor(origin)}|${routeTarget(route)}`;
}

/** `acme/support` for a sync route, `dataset:acme/triage` for a predict route: the ledger and thread-index namespace. */
export function routeTarget(route: RouteConfig): string {
  return route.mode === 'sync' ? route.source! : `dataset:${route.dataset!}`;
}

const PLACEHOLDERS: Record<string, (o: Origin) => string | undefined> = {
  adapter: (o) => o.adapter,
  account: (o) => o.account,
  folder: (o) => o.folder,
  path: (o) => o.path,
};

/**
 * Route properties with `{adapter}`, `{account}`, `{folder}` and `{path}` filled from the
 * origin. A value that ends up empty is left out (the API refuses empty values).
 */
export function resolveUserProperties(props: Readonly<UserProperties>, origin: Origin): UserProperties {
  const out: UserProperties = {};
  for (const [key, value] of Object.entries(props)) {
    if (typeof value !== 'string') {
      out[key] = value;
      continue;
    }
    const resolved = value.replace(/\{(adapter|account|folder|path)\}/g, (_, name: string) => PLACEHOLDERS[name]!(origin) ?? '');
    if (resolved.trim() !== '') out[key] = resolved;
  }
  return out;
}
