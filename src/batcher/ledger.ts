/**
 * The billing ledger (DESIGN.md "Billing"): per (source, comment id), the hashes of what was
 * last sent and the outcome. The store persists it (SQLite/PostgreSQL); MemoryLedger serves
 * tests, dry runs without a store, and benchmarks.
 *
 * Two hashes, because the service bills text, not bytes:
 * - `textHash`: the text of the comment the service builds from the document (its messages:
 *   body, subject, signature, participants, sent_at), as mailgate's preview builds it.
 * - `docHash`: the whole document (raw email and user properties, not the comment id).
 *
 * Rules: a document whose docHash equals a `delivered` entry's is not sent at all
 * ("unchanged"). Estimated cost: 1 AI unit when there is no delivered entry or the text hash
 * differs; 0 when only the rest differs (a header the comment does not show, an attachment,
 * a property) — the same email arriving through a second mailbox costs nothing.
 * Entries written before the text hash had this meaning (`v1:` prefix, see the store's
 * migrations) never match a docHash; a document matching one is sent and estimated at 0.
 */
import { createHash } from 'node:crypto';
import type { Message, RawEmailDocument } from '../model/index.js';
import { buildComment } from '../preview/comment.js';

export interface DocumentHashes {
  textHash: string;
  docHash: string;
}

export interface LedgerEntry extends DocumentHashes {
  outcome: 'delivered' | 'rejected';
  updatedAt: string;
}

export interface Ledger {
  lookup(source: string, commentIds: string[]): Promise<Map<string, LedgerEntry>>;
  record(source: string, entries: Array<LedgerEntry & { commentId: string }>): Promise<void>;
}

/** JSON with object keys sorted at every level, so that equal values hash equally. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The text hash of a comment's messages. */
export function textHashOf(messages: readonly Message[]): string {
  return sha256(canonicalJson(messages));
}

/** The document hash: raw email and user properties ({} when absent), key order irrelevant. */
export function docHashOf(doc: RawEmailDocument): string {
  return sha256(canonicalJson({ raw_email: doc.raw_email, user_properties: doc.user_properties ?? {} }));
}

/**
 * Both hashes of a document. Building the comment costs a preview: intake computes these in
 * the parse workers and stores them with the item, so delivery only calls this for documents
 * that arrive without them (library callers, property rules that changed a document).
 */
export function documentHashes(doc: RawEmailDocument): DocumentHashes {
  return { textHash: textHashOf(buildComment(doc).comment.messages), docHash: docHashOf(doc) };
}

export type LedgerVerdict = 'unchanged' | 'properties-only' | 'text-changed' | 'new';

/** Prefix of text hashes written before they covered the comment's text (store migration 4). */
export const LEGACY_HASH_PREFIX = 'v1:';

/** Compares a document's hashes with its ledger entry. A rejected entry counts as no entry: the comment does not exist. */
export function ledgerVerdict(hashes: DocumentHashes, entry: LedgerEntry | undefined): LedgerVerdict {
  if (entry === undefined || entry.outcome !== 'delivered') return 'new';
  if (entry.textHash.startsWith(LEGACY_HASH_PREFIX)) return 'properties-only';
  if (entry.docHash === hashes.docHash) return 'unchanged';
  return entry.textHash === hashes.textHash ? 'properties-only' : 'text-changed';
}

/** AI units a sync of the document would cost by the ledger rule. */
export function estimatedUnits(verdict: LedgerVerdict): 0 | 1 {
  return verdict === 'new' || verdict === 'text-changed' ? 1 : 0;
}

export class MemoryLedger implements Ledger {
  private readonly sources = new Map<string, Map<string, LedgerEntry>>();

  async lookup(source: string, commentIds: string[]): Promise<Map<string, LedgerEntry>> {
    const known = this.sources.get(source);
    const found = new Map<string, LedgerEntry>();
    if (known === undefined) return found;
    for (const id of commentIds) {
      const entry = known.get(id);
      if (entry !== undefined) found.set(id, { ...entry });
    }
    return found;
  }

  async record(source: string, entries: Array<LedgerEntry & { commentId: string }>): Promise<void> {
    let known = this.sources.get(source);
    if (known === undefined) this.sources.set(source, (known = new Map()));
    for (const { commentId, ...entry } of entries) known.set(commentId, entry);
  }

  /** Entries held for a source (tests, diagnostics). */
  size(source: string): number {
    return this.sources.get(source)?.size ?? 0;
  }
}
