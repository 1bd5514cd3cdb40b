/** The PostgreSQL ledger: per (source, comment id), the hashes of what was last sent (src/ledger/). */
import type pg from 'pg';
import type { Backend } from '../compose.js';
import type { Ledger, LedgerEntry } from '../types.js';
import type { Queryable } from './db.js';

export class PgLedger implements Backend<Ledger> {
  constructor(private readonly pool: pg.Pool) {}

  async lookup(source: string, commentIds: string[]): Promise<Map<string, LedgerEntry>> {
    const { rows } = await this.pool.query<Record<string, string>>(
      `SELECT comment_id, text_hash, doc_hash, outcome, updated_at FROM ledger WHERE source = $1 AND comment_id = ANY($2::text[])`,
      [source, commentIds],
    );
    return new Map(
      rows.map((r) => [
        r.comment_id as string,
        {
          textHash: r.text_hash as string,
          docHash: r.doc_hash as string,
          outcome: r.outcome as LedgerEntry['outcome'],
          updatedAt: r.updated_at as string,
        },
      ]),
    );
  }

  async record(source: string, entries: Array<LedgerEntry & { commentId: string }>, db: Queryable = this.pool): Promise<void> {
    if (entries.length === 0) return;
    // One row per comment id (the last wins), sorted so concurrent writers lock in one order.
    const last = new Map(entries.map((e) => [e.commentId, e]));
    const list = [...last.values()].sort((a, b) => (a.commentId < b.commentId ? -1 : a.commentId > b.commentId ? 1 : 0));
    await db.query(
      `INSERT INTO ledger (source, comment_id, text_hash, doc_hash, outcome, updated_at)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
       ON CONFLICT (source, comment_id) DO UPDATE SET text_hash = excluded.text_hash,
         doc_hash = excluded.doc_hash, outcome = excluded.outcome, updated_at = excluded.updated_at`,
      [
        source,
        list.map((e) => e.commentId),
        list.map((e) => e.textHash),
        list.map((e) => e.docHash),
        list.map((e) => e.outcome),
        list.map((e) => e.updatedAt),
      ],
    );
  }
}
