/** The PostgreSQL thread index. */
import type pg from 'pg';
import { threadsBySource } from '../common.js';
import type { Backend } from '../compose.js';
import type { OutboxInput, ThreadEntry, ThreadStore } from '../types.js';
import { pgText, type Queryable } from './db.js';

export class PgThreads implements Backend<ThreadStore> {
  constructor(private readonly pool: pg.Pool) {}

  /** Writes the thread index entries the items carry, sources in sorted order (inside the caller's transaction). */
  async indexItems(db: Queryable, items: OutboxInput[]): Promise<void> {
    for (const [source, entries] of threadsBySource(items)) await this.indexThread(source, entries, db);
  }

  async indexThread(source: string, entries: ThreadEntry[], db: Queryable = this.pool): Promise<void> {
    if (entries.length === 0) return;
    const last = new Map(entries.map((e) => [e.commentId, e]));
    const list = [...last.values()].sort((a, b) => (a.commentId < b.commentId ? -1 : a.commentId > b.commentId ? 1 : 0));
    await db.query(
      `INSERT INTO threads (source, comment_id, thread_id, ts, timestamp, from_addr, participants)
       SELECT $1, c, t, ts::timestamptz, ts, f, p FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::json[]) AS u(c, t, ts, f, p)
       ON CONFLICT (source, comment_id) DO UPDATE SET thread_id = excluded.thread_id, ts = excluded.ts,
         timestamp = excluded.timestamp, from_addr = excluded.from_addr, participants = excluded.participants`,
      [
        source,
        list.map((e) => e.commentId),
        list.map((e) => e.threadId),
        list.map((e) => e.timestamp),
        list.map((e) => (e.from === undefined ? null : pgText(e.from))),
        list.map((e) => JSON.stringify(e.participants)),
      ],
    );
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
