/**
 * Where a message came from and an adapter's resume point: data the store keeps beside each
 * item. The Adapter contract (src/pipeline/types.ts) re-exports them.
 */

/**
 * Where a message came from, as its adapter tells it: stored with the outbox item and shown in
 * the console, the preview and `mailgate dlq`. The core reads `adapter`, `instance`, `id` and the
 * envelope; `details` belong to the kind (it builds them, reads them back for its after-delivery
 * actions and tells the console how to show them) and the core never interprets them.
 */
export interface Origin {
  /** The kind as it names its messages (`files`, `imap`, `graph`, `gmail`, `upload`, `webhook:<provider>`, `smtp`): the `adapter` metric label. */
  adapter: string;
  /** The configured entry (account, endpoint, listener) the message came through; empty where there is none (`mailgate import`). */
  instance: string;
  /** The message's id within its instance as the adapter names it (an IMAP folder, UIDVALIDITY and UID, a provider's event id, a file and index). */
  id: string;
  /**
   * Push intake (webhooks, uploads, SMTP): the envelope as the sender gave it, kept beside the
   * message (never written into its bytes). A route maps it into user properties with
   * placeholders such as `{envelope.to}`.
   */
  envelope?: Envelope;
  /** The kind's own facts about the message (a folder, a UID, a file path, labels…): plain JSON, shown, never interpreted by the core. */
  details: OriginDetails;
}

/** A kind's own facts about a message: a plain JSON object. */
export type OriginDetails = Record<string, unknown>;

/** Fields of the origin kept by versions before `instance`/`id`/`details`, besides what moved into `details`. */
const LEGACY_COMMON = new Set(['adapter', 'account', 'envelope', 'pushed']);

/**
 * An origin as the store holds it, in the shape above. Items, dead letters and console rows
 * written by earlier versions hold one flat object (`adapter`, `account`, the kind's own fields
 * beside them, `pushed`): `account` becomes `instance`, the kind's fields become `details`
 * unchanged (so the kind reads them back as before), and the id is the provider's `eventId`
 * where there was one, else the item's key without its route target. Every read of a stored
 * origin goes through here.
 */
export function storedOrigin(stored: unknown, key?: string): Origin {
  const o = (typeof stored === 'object' && stored !== null ? stored : {}) as Record<string, unknown>;
  const adapter = typeof o['adapter'] === 'string' ? o['adapter'] : 'unknown';
  if (typeof o['instance'] === 'string' && typeof o['id'] === 'string' && isObject(o['details'])) {
    return { ...(o as object), adapter } as Origin;
  }
  const details: OriginDetails = {};
  for (const [k, v] of Object.entries(o)) if (!LEGACY_COMMON.has(k)) details[k] = v;
  const eventId = o['eventId'];
  const keyId = key === undefined ? '' : key.slice(0, key.lastIndexOf('|') < 0 ? key.length : key.lastIndexOf('|'));
  return {
    adapter,
    instance: typeof o['account'] === 'string' ? o['account'] : '',
    id: typeof eventId === 'string' && eventId !== '' ? eventId : keyId,
    ...(isObject(o['envelope']) && { envelope: o['envelope'] as Envelope }),
    details,
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Envelope and transport facts of a pushed message. Every field is optional: providers differ. */
export interface Envelope {
  /** MAIL FROM / the provider's envelope sender. */
  from?: string;
  /** RCPT TO / the provider's envelope recipients. */
  to?: string[];
  /** The provider (`sendgrid`, `mailgun`, …) or `smtp`, `upload`. */
  provider?: string;
  /** Client address the message came from, as the provider reports it. */
  remoteAddress?: string;
  helo?: string;
  tls?: boolean;
  spamVerdict?: string;
  spamScore?: number;
  spf?: string;
  dkim?: string;
  dmarc?: string;
  /** Anything else the provider states about the message, flat strings only. */
  extra?: Record<string, string>;
  /**
   * The envelope an Exchange journal report listed (a route with `unwrap: exchange_journal`):
   * `to` above then holds every recipient, and these keep the report's lines apart.
   */
  journal?: JournalEnvelope;
}

/** Recipients of an Exchange journal report, by line (lower-case addresses, each once, in report order). */
export interface JournalEnvelope {
  to: string[];
  cc: string[];
  bcc: string[];
  /** `Recipient:` lines (the type was not known to Exchange). */
  recipient: string[];
  /** Recipients reached through a distribution list Exchange expanded. */
  expanded: string[];
  /** The distribution lists that were expanded. */
  lists: string[];
  /** Recipients reached because another recipient forwarded the message. */
  forwarded: string[];
}

/** An adapter's resume point, written in the same transaction as the items it covers. */
export interface Checkpoint {
  /** e.g. `imap:support-inbox:INBOX`, `files:/path/to/archive.mbox`. */
  key: string;
  /** Opaque to the store; adapters define the shape (UIDVALIDITY/last UID/HIGHESTMODSEQ, byte offset…). */
  value: Record<string, unknown>;
}

/** One labelled line of an origin's details as the console shows it (`Folder: INBOX`). */
export interface OriginLine {
  label: string;
  value: string;
}

/** How an origin's details are shown: a short text for a table cell and labelled lines for the item view. */
export interface OriginDisplay {
  summary: string;
  lines: OriginLine[];
}

/** A detail as text: strings and numbers as they are, a list comma-separated, anything else as JSON; undefined when absent. */
export function detailText(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) return v.join(', ');
  return JSON.stringify(v);
}

/** The lines of `details` named in `fields` (`[detail, label]`, in that order), those present. */
export function detailLines(details: Readonly<OriginDetails>, fields: ReadonlyArray<readonly [string, string]>): OriginLine[] {
  const out: OriginLine[] = [];
  for (const [key, label] of fields) {
    const value = detailText(details[key]);
    if (value !== undefined) out.push({ label, value });
  }
  return out;
}

/** The display of a kind that declares none: every detail under its own name, the id as the summary. */
export function plainDisplay(origin: Pick<Origin, 'id' | 'details'>): OriginDisplay {
  return {
    summary: origin.id,
    lines: detailLines(
      origin.details,
      Object.keys(origin.details).map((k) => [k, k] as const),
    ),
  };
}
