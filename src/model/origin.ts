/**
 * Where a message came from and an adapter's resume point: data the store keeps beside each
 * item. The Adapter contract (src/pipeline/types.ts) re-exports them.
 */

/** Where a message came from. Stored with the outbox item and shown in previews. */
export interface Origin {
  /** Adapter kind: `files`, `imap`, `upload`, `webhook:<provider>`, `smtp`. */
  adapter: string;
  /** Adapter instance / account name from the configuration, when there is one. */
  account?: string;
  folder?: string;
  /** Labels an export gave the message (Google Vault) or the mailbox has on it (Gmail), in their order. */
  labels?: string[];
  /** The mailbox a message was read from (Graph: the user principal name or id as configured; Gmail: the user). */
  mailbox?: string;
  /** The message's Internet Message-ID as the mailbox reports it (Graph), angle brackets kept. */
  internetMessageId?: string;
  /** The conversation the mailbox filed the message in (Gmail: its thread id). */
  threadId?: string;
  uidValidity?: number;
  uid?: number;
  path?: string;
  /** Index of the message inside its file (mbox), from 0. */
  index?: number;
  /**
   * The message's own id at its sender, for deduplication beside its bytes: a provider's event
   * or message id, an upload's idempotency key. Absent where the sender has none that names the
   * message (an SMTP queue id names one client's transaction).
   */
  eventId?: string;
  /**
   * Handed to mailgate (webhooks, uploads, SMTP) rather than read from a place it can read
   * again: keyed by the SHA-256 of its bytes, and by `eventId` when there is one.
   */
  pushed?: boolean;
  /**
   * Push intake (webhooks, uploads, SMTP): the envelope as the sender gave it, kept beside the
   * message (never written into its bytes). A route maps it into user properties with
   * placeholders such as `{envelope.to}`.
   */
  envelope?: Envelope;
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
