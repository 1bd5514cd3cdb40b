/**
 * The billing ledger (DESIGN.md "Billing"): per (source, comment id), hashes of the text and
 * of the properties last sent, and the outcome. The store persists it (SQLite/PostgreSQL);
 * MemoryLedger serves tests, dry runs without a store, and benchmarks.
 *
 * Rules: a document whose text and properties hashes both equal a `delivered` entry is not
 * sent at all ("unchanged"). Estimated cost: 1 AI unit when there is no delivered entry or
 * the text hash differs; 0 when only the properties differ.
 */
import { createHash } from 'node:crypto';
import type { RawEmailDocument } from '../model/index.js';

export interface LedgerEntry {
  textHash: string;
  propsHash: string;
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

/** textHash over the raw email (headers, body, attachments); propsHash over user_properties ({} when absent). */
export function documentHashes(doc: RawEmailDocument): { textHash: string; propsHash: string } {
  return { textHash: sha256(canonicalJson(doc.raw_email)), propsHash: sha256(canonicalJson(doc.user_properties ?? {})) };
}

export type LedgerVerdict = 'unchanged' | 'properties-only' | 'text-changed' | 'new';

/** Compares a document's hashes with its ledger entry. A rejected entry counts as no entry: the comment does not exist. */
export function ledgerVerdict(hashes: { textHash: string; propsHash: string }, entry: LedgerEntry | undefined): LedgerVerdict {
  if (entry === undefined || entry.outcome !== 'delivered') return 'new';
  if (entry.textHash !== hashes.textHash) return 'text-changed';
  return entry.propsHash === hashes.propsHash ? 'unchanged' : 'properties-only';
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
