/**
 * The ledger rule: a document whose docHash equals a `delivered` entry's is not sent at all
 * ("unchanged"). Estimated cost: 1 AI unit when there is no delivered entry or the text hash
 * differs; 0 when only the rest differs (a header the comment does not show, an attachment,
 * a property) — the same email arriving through a second mailbox costs nothing.
 * Entries written before the text hash had this meaning (`v1:` prefix, see the store's
 * migrations) never match a docHash; a document matching one is sent and estimated at 0.
 */
import type { DocumentHashes, LedgerEntry } from './types.js';

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
