/**
 * The document text of items this connection enqueued, kept until a claim takes them: intake
 * hands the store the text moments before delivery claims it, so a claim of items found here
 * reads only their outbox rows instead of reading every document back from the file (and
 * building a second copy of each string). A claim takes what it finds; anything else is read
 * from `outbox_docs` as before, so what is kept is only ever a shortcut.
 *
 * What is kept must be what the file holds. This connection's own writes keep it so (a body is
 * kept once its enqueue has committed and forgotten when anything writes that item's body or
 * settles it without a claim); another connection's commit (a replica, `mailgate dlq replay`, a
 * second store opened on the file) may have changed any item, and SQLite's `data_version`, read
 * inside each write transaction that uses what is kept, tells that one has happened: then
 * everything kept is forgotten.
 */
import type Database from 'better-sqlite3';
import type { DocumentHashes } from '../../ledger/index.js';

/** What a claim reads from an item's `outbox_docs` row. */
export interface Body {
  document: string;
  preview: string | null;
  hashes: DocumentHashes | undefined;
}

/**
 * The most text kept, in UTF-16 code units of the documents and previews: when delivery falls
 * behind intake, the oldest items (the next to be claimed) stay kept and newer ones are read back.
 */
export const MAX_KEPT_TEXT = 8 * 1024 * 1024;

export class KeptBodies {
  private readonly bodies = new Map<number, Body>();
  private size = 0;
  private version: unknown;
  private readonly dataVersion: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly max = MAX_KEPT_TEXT,
  ) {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
  }

  /**
   * Forgets everything when another connection has committed since the last call. Call inside the
   * write transaction that then adds or takes, so that no other commit can come in between.
   */
  check(): void {
    const version = this.dataVersion.get();
    if (version === this.version) return;
    this.bodies.clear();
    this.size = 0;
    this.version = version;
  }

  /** Keeps the body of item `id` (just committed by this connection), unless that would pass the bound. */
  add(id: number, body: Body): void {
    this.take(id);
    const size = sizeOf(body);
    if (this.size + size > this.max) return;
    this.bodies.set(id, body);
    this.size += size;
  }

  /** The kept body of item `id`, forgotten; undefined when none is kept. */
  take(id: number): Body | undefined {
    const body = this.bodies.get(id);
    if (body === undefined) return undefined;
    this.bodies.delete(id);
    this.size -= sizeOf(body);
    return body;
  }

  /** Text kept now (for tests and benches). */
  get keptText(): number {
    return this.size;
  }
}

const sizeOf = (body: Body): number => body.document.length + (body.preview?.length ?? 0);
