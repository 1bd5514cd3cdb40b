/** A ledger in memory: tests, dry runs without a store, and benchmarks. */
import type { Ledger, LedgerEntry } from './types.js';

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
