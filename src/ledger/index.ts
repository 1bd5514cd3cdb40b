/**
 * The billing ledger (DESIGN.md "Billing"): per (source, comment id), the hashes of what was
 * last sent and the outcome. Its one home, below both the batcher (which applies the rule
 * before sending) and the store (which persists the entries), and below intake (whose parse
 * workers compute the hashes): none of them reaches into another for it.
 */
export { canonicalJson, docHashOf, documentHashes, documentJsonAndHash, textHashOf } from './hashes.js';
export { MemoryLedger } from './memory.js';
export type { DocumentHashes, Ledger, LedgerEntry, LedgerRecord } from './types.js';
export { LEGACY_HASH_PREFIX, estimatedUnits, ledgerVerdict, type LedgerVerdict } from './verdict.js';
