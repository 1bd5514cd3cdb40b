/** The PostgreSQL ledger: per (source, comment id), the hashes of what was last sent (src/ledger/). */
import type pg from 'pg';
import { byCodeUnits } from '../common.js';
import type { Backend } from '../compose.js';
import type { Ledger, LedgerEntry } from '../types.js';
import { jsonRecords, pgArray, type Queryable } from './db.js';

/**
 * The ledger upsert of these entries (one row per source and comment id, the last wins, in sorted
 * order so that concurrent writers lock alike), its one parameter (the entries as one JSON text,
 * read with json_to_recordset) numbered `$first`: a statement of its own, or a step of the
 * delivery outcome's statement.
 */
export function ledgerUpsert(
  records: Array<{ source: string; entries: Array<LedgerEntry & { commentId: string }> }>,
  first: number,
): { sql: string; values: unknown[] } | undefined {
  const last = new Map<string, { source: string; entry: LedgerEntry & { commentId: string } }>();
  // The source's length first: no two (source, comment id) pairs give one map key.
  for (const { source, entries } of records)
    for (const e of entries) last.set(`${source.length}:${source}${e.commentId}`, { source, entry: e });
  if (last.size === 0) return undefined;
  const list = [...last.values()].sort((a, b) => byCodeUnits(a.source, b.source) || byCodeUnits(a.entry.commentId, b.entry.commentId));
  const sql = `INSERT INTO ledger (source, comment_id, text_hash, doc_hash, outcome, updated_at)
       SELECT s, c, t, d, o, u FROM json_to_recordset($${first}::json) AS l(s text, c text, t text, d text, o text, u text)
       ON CONFLICT (source, comment_id) DO UPDATE SET text_hash = excluded.text_hash,
         doc_hash = excluded.doc_hash, outcome = excluded.outcome, updated_at = excluded.updated_at`;
  const json = jsonRecords((fix) =>
    list.map(({ source, entry: e }) => ({
      s: fix.wellFormed(source),
      c: fix.wellFormed(e.commentId),
      t: e.textHash,
      d: e.docHash,
      o: e.outcome,
      u: e.updatedAt,
    })),
  );
  return { sql, values: [json] };
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
