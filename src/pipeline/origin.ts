/** Helpers tying a message to its outbox key, its route's target and its route properties. */
import { createHash } from 'node:crypto';
import type { UserProperties } from '../model/index.js';
import type { Origin } from './types.js';

/**
 * What these helpers read of a route: where it delivers. Structural, so that a push kind's
 * module can build its key here without reaching the configuration schema (which lists the kinds).
 */
export interface RouteTargetOf {
  mode: 'sync' | 'predict';
  source?: string | undefined;
  dataset?: string | undefined;
}

/**
 * The key of a message handed to mailgate (webhooks, uploads, SMTP) rather than read from a
 * place it can read again: the SHA-256 of its bytes (`sha256:<hex>`), so that a sender's retry
 * of the same bytes is stored once whatever ids it carries. Push kinds build their key with it;
 * a pull kind builds its own from where the message sits (an IMAP UID, a file's path and index).
 */
export function contentKey(raw: Buffer): string {
  return `sha256:${createHash('sha256').update(raw).digest('hex')}`;
}

/**
 * The outbox key of a message: the key its adapter built, within the route's target. The same
 * message read again for the same target is stored once; for another target (a route pointed
 * at a new source, an import into a second source) it is new.
 */
export function outboxKey(route: RouteTargetOf, key: string): string {
  return `${key}|${routeTarget(route)}`;
}

/**
 * The second idempotency key of a pushed message: the provider's event id (or an upload's
 * idempotency key) within the adapter instance and the route's target, or undefined when there
 * is none (SMTP sets none: a queue id names a transaction of one client, not a message, and two
 * clients may well use the same one; its messages are deduplicated on their bytes alone).
 */
export function eventKey(route: RouteTargetOf, origin: Origin): string | undefined {
  if (origin.eventId === undefined || origin.eventId === '' || origin.pushed !== true) return undefined;
  return `${origin.adapter}:${origin.account ?? ''}:event:${origin.eventId}|${routeTarget(route)}`;
}

/** `acme/support` for a sync route, `dataset:acme/triage` for a predict route: the ledger and thread-index namespace. */
export function routeTarget(route: RouteTargetOf): string {
  return route.mode === 'sync' ? route.source! : `dataset:${route.dataset!}`;
}

const PLACEHOLDERS: Record<string, (o: Origin) => string | undefined> = {
  adapter: (o) => o.adapter,
  account: (o) => o.account,
  folder: (o) => o.folder,
  labels: (o) => o.labels?.join(','),
  mailbox: (o) => o.mailbox,
  path: (o) => o.path,
  eventId: (o) => o.eventId,
  'envelope.from': (o) => o.envelope?.from,
  'envelope.to': (o) => o.envelope?.to?.join(','),
  'envelope.provider': (o) => o.envelope?.provider,
  'envelope.spf': (o) => o.envelope?.spf,
  'envelope.dkim': (o) => o.envelope?.dkim,
  'envelope.dmarc': (o) => o.envelope?.dmarc,
  'envelope.spamVerdict': (o) => o.envelope?.spamVerdict,
  'envelope.remoteAddress': (o) => o.envelope?.remoteAddress,
  'envelope.helo': (o) => o.envelope?.helo,
  'envelope.tls': (o) => (o.envelope?.tls === undefined ? undefined : String(o.envelope.tls)),
  'envelope.journal.to': (o) => o.envelope?.journal?.to.join(','),
  'envelope.journal.cc': (o) => o.envelope?.journal?.cc.join(','),
  'envelope.journal.bcc': (o) => o.envelope?.journal?.bcc.join(','),
  'envelope.journal.recipient': (o) => o.envelope?.journal?.recipient.join(','),
  'envelope.journal.expanded': (o) => o.envelope?.journal?.expanded.join(','),
  'envelope.journal.lists': (o) => o.envelope?.journal?.lists.join(','),
  'envelope.journal.forwarded': (o) => o.envelope?.journal?.forwarded.join(','),
};

/** `{envelope.extra.<key>}`: what an adapter states beyond the common fields (SMTP: `plus`, the +detail of the recipient). */
const EXTRA = 'envelope\\.extra\\.[A-Za-z0-9_-]+';

const PLACEHOLDER = new RegExp(
  `\\{(${Object.keys(PLACEHOLDERS)
    .map((k) => k.replaceAll('.', '\\.'))
    .join('|')}|${EXTRA})\\}`,
  'g',
);

function placeholder(name: string, origin: Origin): string | undefined {
  if (name.startsWith('envelope.extra.')) return origin.envelope?.extra?.[name.slice('envelope.extra.'.length)];
  return PLACEHOLDERS[name]!(origin);
}

/**
 * Route properties with `{adapter}`, `{account}`, `{folder}`, `{mailbox}`, `{path}`, `{eventId}` and the
 * envelope of a pushed message (`{envelope.from}`, `{envelope.to}` comma-joined,
 * `{envelope.provider}`, `{envelope.spf}`, `{envelope.dkim}`, `{envelope.dmarc}`,
 * `{envelope.spamVerdict}`, `{envelope.remoteAddress}`, `{envelope.helo}`, `{envelope.tls}`, `{envelope.extra.<key>}`)
 * filled from the origin. A value that
 * ends up empty is left out (the API refuses empty values).
 */
export function resolveUserProperties(props: Readonly<UserProperties>, origin: Origin): UserProperties {
  const out: UserProperties = {};
  for (const [key, value] of Object.entries(props)) {
    if (typeof value !== 'string') {
      out[key] = value;
      continue;
    }
    const resolved = value.replace(PLACEHOLDER, (_, name: string) => placeholder(name, origin) ?? '');
    if (resolved.trim() !== '') out[key] = resolved;
  }
  return out;
}
