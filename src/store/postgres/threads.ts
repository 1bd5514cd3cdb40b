/** The PostgreSQL thread index. */
import type pg from 'pg';
import { byCodeUnits, threadsBySource } from '../common.js';
import type { Backend } from '../compose.js';
import type { OutboxInput, ThreadEntry, ThreadStore } from '../types.js';
import { pgArray, pgText, type Queryable } from './db.js';

/** Array parameters of the thread index upsert. */
export const THREAD_PARAMS = 6;

/**
 * The thread index upsert of these entries (per source; one row per source and comment id, the
 * last wins, in sorted order so that concurrent writers lock alike), its six array parameters
 * numbered from `$first`: a statement of its own, or a step of the enqueue's statement.
 */
export function threadUpsert(bySource: Array<[string, ThreadEntry[]]>, first: number): { sql: string; values: unknown[] } | undefined {
  const cols: Array<Array<string | null>> = [[], [], [], [], [], []];
  for (const [source, entries] of bySource) {
    const last = new Map(entries.map((e) => [e.commentId, e]));
    const list = [...last.values()].sort((a, b) => byCodeUnits(a.commentId, b.commentId));
    for (const e of list) {
      cols[0]!.push(source);
      cols[1]!.push(e.commentId);
      cols[2]!.push(e.threadId);
      cols[3]!.push(e.timestamp);
      cols[4]!.push(e.from === undefined ? null : pgText(e.from));
      cols[5]!.push(JSON.stringify(e.participants));
    }
  }
  if (cols[0]!.length === 0) return undefined;
  const p = (i: number): string => `$${first + i}`;
  const sql = `INSERT INTO threads (source, comment_id, thread_id, ts, timestamp, from_addr, participants)
       SELECT s, c, t, ts::timestamptz, ts, f, p
       FROM unnest(${p(0)}::text[], ${p(1)}::text[], ${p(2)}::text[], ${p(3)}::text[], ${p(4)}::text[], ${p(5)}::json[]) AS u(s, c, t, ts, f, p)
       ON CONFLICT (source, comment_id) DO UPDATE SET thread_id = excluded.thread_id, ts = excluded.ts,
         timestamp = excluded.timestamp, from_addr = excluded.from_addr, participants = excluded.participants`;
  return { sql, values: cols.map(pgArray) };
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
