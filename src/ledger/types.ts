/**
 * The ledger's contract: what the batcher reads before a delivery and writes after it, and what
 * every store persists (DESIGN.md "Billing").
 */

/** The two hashes kept per (source, comment id): see src/ledger/hashes.ts. */
export interface DocumentHashes {
  textHash: string;
  docHash: string;
}

export interface LedgerEntry extends DocumentHashes {
  outcome: 'delivered' | 'rejected';
  updatedAt: string;
}

/** Ledger entries of one source, as `Ledger.record` takes them. */
export interface LedgerRecord {
  source: string;
  entries: Array<LedgerEntry & { commentId: string }>;
}

export interface Ledger {
  lookup(source: string, commentIds: string[]): Promise<Map<string, LedgerEntry>>;
  record(source: string, entries: Array<LedgerEntry & { commentId: string }>): Promise<void>;
}
