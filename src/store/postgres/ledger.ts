/** The PostgreSQL ledger: per (source, comment id), the hashes of what was last sent (src/ledger/). */
import type pg from 'pg';
import { byCodeUnits } from '../common.js';
import type { Backend } from '../compose.js';
import type { Ledger, LedgerEntry } from '../types.js';
import { pgArray, type Queryable } from './db.js';

/**
 * The ledger upsert of these entries (one row per source and comment id, the last wins, in sorted
 * order so that concurrent writers lock alike), its six array parameters numbered from `$first`:
 * a statement of its own, or a step of the delivery outcome's statement. Arrays rather than one
 * JSON text read with json_to_recordset: that costs the server ~1 µs more a row than the client
 * saves.
 */
export function ledgerUpsert(
  records: Array<{ source: string; entries: Array<LedgerEntry & { commentId: string }> }>,
  first: number,
): { sql: string; values: unknown[] } | undefined {
  const last = new Map<string, { source: string; entry: LedgerEntry & { commentId: string } }>();
  for (const { source, entries } of records) for (const e of entries) last.set(JSON.stringify([source, e.commentId]), { source, entry: e });
  if (last.size === 0) return undefined;
  const list = [...last.values()].sort((a, b) => byCodeUnits(a.source, b.source) || byCodeUnits(a.entry.commentId, b.entry.commentId));
  const p = (i: number): string => `$${first + i}::text[]`;
  const sql = `INSERT INTO ledger (source, comment_id, text_hash, doc_hash, outcome, updated_at)
       SELECT * FROM unnest(${[0, 1, 2, 3, 4, 5].map(p).join(', ')})
       ON CONFLICT (source, comment_id) DO UPDATE SET text_hash = excluded.text_hash,
         doc_hash = excluded.doc_hash, outcome = excluded.outcome, updated_at = excluded.updated_at`;
  const values = [
    list.map((l) => l.source),
    list.map((l) => l.entry.commentId),
    list.map((l) => l.entry.textHash),
    list.map((l) => l.entry.docHash),
    list.map((l) => l.entry.outcome),
    list.map((l) => l.entry.updatedAt),
  ].map(pgArray);
  return { sql, values };
}

export class PgLedger implements Backend<Ledger> {
  constructor(private readonly pool: pg.Pool) {}

  async lookup(source: string, commentIds: string[]): Promise<Map<string, LedgerEntry>> {
    const { rows } = await this.pool.query<Record<string, string>>(
      `SELECT comment_id, text_hash, doc_hash, outcome, updated_at FROM ledger WHERE source = $1 AND comment_id = ANY($2::text[])`,
      [source, pgArray(commentIds)],
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
    const st = ledgerUpsert([{ source, entries }], 1);
    if (st !== undefined) await db.query(st.sql, st.values);
  }
}
