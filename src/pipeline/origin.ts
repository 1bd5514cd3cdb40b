/** Helpers tying a message to its outbox key, its route's target and its route properties. */
import { hash } from 'node:crypto';
import type { UserProperties } from '../model/index.js';
import type { Envelope, Origin } from './types.js';

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
  return `sha256:${hash('sha256', raw, 'hex')}`;
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
 * The second identity of a pushed message, for `Inbound.alias`: the sender's own id for it (a
 * provider's event id, an upload's idempotency key) within the adapter instance, or undefined
 * when there is none (SMTP sets none: a queue id names a transaction of one client, not a
 * message, and two clients may well use the same one; its messages are deduplicated on their
 * bytes alone). `<adapter>:<instance>:event:<id>`, the form stores written before hold.
 */
export function eventAlias(adapter: string, instance: string, eventId: string | undefined): string | undefined {
  return eventId === undefined || eventId === '' ? undefined : `${adapter}:${instance}:event:${eventId}`;
}

/** `acme/support` for a sync route, `dataset:acme/triage` for a predict route: the ledger and thread-index namespace. */
export function routeTarget(route: RouteTargetOf): string {
  return route.mode === 'sync' ? route.source! : `dataset:${route.dataset!}`;
}

/** Placeholders read from the origin's common fields. */
const COMMON: Record<string, (o: Origin) => string | undefined> = {
  adapter: (o) => o.adapter,
  instance: (o) => o.instance,
  id: (o) => o.id,
};

/**
 * Placeholders read from the origin's details by the same name, whatever the kind put there
 * (`{folder}`, `{labels}`, `{mailbox}`, `{path}`, `{eventId}`), empty for a message whose kind
 * has none. `{account}` is the name `{instance}` had: an account a kind names in its details (a
 * Google Vault export's), else the instance.
 */
const DETAILS = ['account', 'folder', 'labels', 'mailbox', 'path', 'eventId'];
const FALLBACK: Record<string, (o: Origin) => string | undefined> = { account: (o) => o.instance };

const ENVELOPE: Record<string, (e: Envelope) => string | undefined> = {
  'envelope.from': (e) => e.from,
  'envelope.to': (e) => e.to?.join(','),
  'envelope.provider': (e) => e.provider,
  'envelope.spf': (e) => e.spf,
  'envelope.dkim': (e) => e.dkim,
  'envelope.dmarc': (e) => e.dmarc,
  'envelope.spamVerdict': (e) => e.spamVerdict,
  'envelope.remoteAddress': (e) => e.remoteAddress,
  'envelope.helo': (e) => e.helo,
  'envelope.tls': (e) => (e.tls === undefined ? undefined : String(e.tls)),
  'envelope.journal.to': (e) => e.journal?.to.join(','),
  'envelope.journal.cc': (e) => e.journal?.cc.join(','),
  'envelope.journal.bcc': (e) => e.journal?.bcc.join(','),
  'envelope.journal.recipient': (e) => e.journal?.recipient.join(','),
  'envelope.journal.expanded': (e) => e.journal?.expanded.join(','),
  'envelope.journal.lists': (e) => e.journal?.lists.join(','),
  'envelope.journal.forwarded': (e) => e.journal?.forwarded.join(','),
};

/** A detail as a property value: text and numbers as they are, a list comma-joined; anything else is not shown. */
function shown(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) return v.join(',');
  return undefined;
}

/** `{envelope.extra.<key>}`: what an adapter states beyond the common fields (SMTP: `plus`, the +detail of the recipient). */
const EXTRA = 'envelope\\.extra\\.[A-Za-z0-9_-]+';

const PLACEHOLDER = new RegExp(
  `\\{(${[...Object.keys(COMMON), ...DETAILS, ...Object.keys(ENVELOPE)].map((k) => k.replaceAll('.', '\\.')).join('|')}|${EXTRA})\\}`,
  'g',
);

function placeholder(name: string, origin: Origin): string | undefined {
  if (name.startsWith('envelope.extra.')) return origin.envelope?.extra?.[name.slice('envelope.extra.'.length)];
  if (name.startsWith('envelope.')) return origin.envelope === undefined ? undefined : ENVELOPE[name]!(origin.envelope);
  return COMMON[name]?.(origin) ?? shown(origin.details[name]) ?? FALLBACK[name]?.(origin);
}

/**
 * Route properties with `{adapter}`, `{instance}` (also `{account}`), `{id}`, the origin's
 * details `{folder}`, `{labels}`, `{mailbox}`, `{path}`, `{eventId}` and the
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
