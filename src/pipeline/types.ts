/**
 * The Adapter contract (DESIGN.md "Contracts"). Adapters import these types and nothing
 * else from the core pipeline; they never import each other.
 */

/** Where a message came from. Stored with the outbox item and shown in previews. */
export interface Origin {
  /** Adapter kind: `files`, `imap`, `upload`, `webhook:<provider>`, `smtp`. */
  adapter: string;
  /** Adapter instance / account name from the configuration, when there is one. */
  account?: string;
  folder?: string;
  uidValidity?: number;
  uid?: number;
  path?: string;
  /** Index of the message inside its file (mbox), from 0. */
  index?: number;
  /** Provider event id, SMTP queue id, upload id… */
  eventId?: string;
}

export interface Inbound {
  raw: Buffer;
  origin: Origin;
  /** Name of the route (configuration) this message belongs to. */
  route: string;
  receivedAt: Date;
  /** The adapter has an action to apply once the API accepted the message (see OutboxInput.afterDelivery). */
  afterDelivery?: boolean;
  /**
   * The adapter could not read a message (a corrupt Outlook file, one over the size budget):
   * intake stores it as a dead letter with this reason and whatever bytes `raw` holds, so
   * nothing read is lost or silent.
   */
  failure?: { code: string; message: string };
}

/** An adapter's resume point, written in the same transaction as the items it covers. */
export interface Checkpoint {
  /** e.g. `imap:support-inbox:INBOX`, `files:/path/to/archive.mbox`. */
  key: string;
  /** Opaque to the store; adapters define the shape (UIDVALIDITY/last UID/HIGHESTMODSEQ, byte offset…). */
  value: Record<string, unknown>;
}

export interface IntakeSink {
  /**
   * Resolves once every message of the batch (and the checkpoint) is durable. An adapter may
   * call it again before the previous call resolved: batches are stored in call order, and a
   * batch queued behind one that failed fails too (its checkpoint is never written).
   */
  accept(batch: Inbound[], checkpoint?: Checkpoint): Promise<void>;
  /** Reads a checkpoint written earlier with accept(). */
  checkpoint(key: string): Promise<Checkpoint['value'] | undefined>;
}

export interface Adapter {
  readonly kind: string;
  /** Runs until the input is exhausted (files) or the signal aborts (services). */
  start(sink: IntakeSink, signal: AbortSignal): Promise<void>;
}
