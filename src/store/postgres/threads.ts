/** The PostgreSQL thread index. */
import type pg from 'pg';
import { byCodeUnits, threadsBySource } from '../common.js';
import type { Backend } from '../compose.js';
import type { OutboxInput, ThreadEntry, ThreadStore } from '../types.js';
import { jsonRecords, type Queryable } from './db.js';

/** Parameters of the thread index upsert: one JSON array of the entries. */
export const THREAD_PARAMS = 1;

/**
 * The thread index upsert of these entries (per source; one row per source and comment id, the
 * last wins, in sorted order so that concurrent writers lock alike), its one parameter numbered
 * `$first`: a statement of its own, or a step of the enqueue's statement. The entries travel as
 * one JSON array (JSON.stringify's text, read with json_to_recordset): as arrays, each
 * participants list would be JSON inside an array literal, escaped element by element. A
 * participants list is a JSON text inside it, read as the column's json as it was written (a
 * json value inside the recordset would have its strings decoded, which refuses `\u0000`).
 */
export function threadUpsert(bySource: Array<[string, ThreadEntry[]]>, first: number): { sql: string; values: unknown[] } | undefined {
  const list = bySource.flatMap(([source, entries]) => {
    const last = new Map(entries.map((e) => [e.commentId, e]));
    return [...last.values()].sort((a, b) => byCodeUnits(a.commentId, b.commentId)).map((e) => ({ source, e }));
  });
  if (list.length === 0) return undefined;
  const json = jsonRecords((fix) =>
    list.map(({ source, e }) => ({
      s: fix.wellFormed(source),
      c: fix.wellFormed(e.commentId),
      t: fix.wellFormed(e.threadId),
      ts: e.timestamp,
      f: e.from === undefined ? null : fix.text(e.from),
      p: JSON.stringify(e.participants),
    })),
  );
  const sql = `INSERT INTO threads (source, comment_id, thread_id, ts, timestamp, from_addr, participants)
       SELECT s, c, t, ts::timestamptz, ts, f, p::json
       FROM json_to_recordset($${first}::json) AS u(s text, c text, t text, ts text, f text, p text)
       ON CONFLICT (source, comment_id) DO UPDATE SET thread_id = excluded.thread_id, ts = excluded.ts,
         timestamp = excluded.timestamp, from_addr = excluded.from_addr, participants = excluded.participants`;
  return { sql, values: [json] };
}

export class PgThreads implements Backend<ThreadStore> {
  constructor(private readonly pool: pg.Pool) {}

  /** Writes the thread index entries the items carry, in one statement (inside the caller's transaction). */
  async indexItems(db: Queryable, items: OutboxInput[]): Promise<void> {
    const st = threadUpsert(threadsBySource(items), 1);
    if (st !== undefined) await db.query(st.sql, st.values);
  }

  async indexThread(source: string, entries: ThreadEntry[], db: Queryable = this.pool): Promise<void> {
    const st = threadUpsert([[source, entries]], 1);
    if (st !== undefined) await db.query(st.sql, st.values);
  }

  async threadMembers(source: string, threadIds: string[]): Promise<Map<string, ThreadEntry[]>> {
    const { rows } = await this.pool.query<{
      comment_id: string;
      thread_id: string;
      timestamp: string;
      from_addr: string | null;
      participants: string[];
    }>(
      `SELECT comment_id, thread_id, timestamp, from_addr, participants FROM threads
       WHERE source = $1 AND thread_id = ANY($2::text[]) ORDER BY thread_id, ts, comment_id COLLATE "C"`,
      [source, threadIds],
    );
    const members = new Map<string, ThreadEntry[]>();
    for (const r of rows) {
      const entry: ThreadEntry = { commentId: r.comment_id, threadId: r.thread_id, timestamp: r.timestamp, participants: r.participants };
      if (r.from_addr !== null) entry.from = r.from_addr;
      members.set(r.thread_id, [...(members.get(r.thread_id) ?? []), entry]);
    }
    return members;
  }
}
