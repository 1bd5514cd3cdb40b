/** The SQLite ledger: per (source, comment id), the hashes of what was last sent (src/ledger/). */
import type Database from 'better-sqlite3';
import { MultiRowInsert } from './multi-row.js';
import { statement } from './statements.js';
import type { Backend } from '../compose.js';
import type { Ledger, LedgerEntry } from '../types.js';

export class SqliteLedger implements Backend<Ledger> {
  /** The ledger's upsert: the last entry given for a comment wins. */
  private readonly upsert: MultiRowInsert;

  constructor(private readonly db: Database.Database) {
    this.upsert = new MultiRowInsert(
      db,
      'INSERT INTO ledger (source, comment_id, text_hash, doc_hash, outcome, updated_at)',
      `ON CONFLICT (source, comment_id) DO UPDATE SET text_hash = excluded.text_hash,
         doc_hash = excluded.doc_hash, outcome = excluded.outcome, updated_at = excluded.updated_at`,
      6,
    );
  }

  lookup(source: string, commentIds: string[]): Map<string, LedgerEntry> {
    const rows = statement(
      this.db,
      `SELECT comment_id, text_hash, doc_hash, outcome, updated_at FROM ledger
       WHERE source = ? AND comment_id IN (SELECT value FROM json_each(?))`,
    ).all(source, JSON.stringify(commentIds)) as Array<Record<string, string>>;
    const found = new Map<string, LedgerEntry>();
    for (const r of rows) {
      found.set(r.comment_id as string, {
        textHash: r.text_hash as string,
        docHash: r.doc_hash as string,
        outcome: r.outcome as LedgerEntry['outcome'],
        updatedAt: r.updated_at as string,
      });
    }
    return found;
  }

  record(source: string, entries: Array<LedgerEntry & { commentId: string }>): void {
    this.db.transaction(() => this.put(source, entries)).immediate();
  }

  /** Records entries (call inside the caller's transaction). */
  put(source: string, entries: Array<LedgerEntry & { commentId: string }>): void {
    this.upsert.run(entries.map((e) => [source, e.commentId, e.textHash, e.docHash, e.outcome, e.updatedAt]));
  }
}
