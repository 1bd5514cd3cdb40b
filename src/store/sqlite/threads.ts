/** The SQLite thread index. */
import type Database from 'better-sqlite3';
import { MultiRowInsert } from './multi-row.js';
import { statement } from './statements.js';
import type { Backend } from '../compose.js';
import type { OutboxInput, ThreadEntry, ThreadStore } from '../types.js';
import { threadsBySource } from '../common.js';

export class SqliteThreads implements Backend<ThreadStore> {
  /** The index's upsert: the last entry given for a comment wins. */
  private readonly upsert: MultiRowInsert;

  constructor(private readonly db: Database.Database) {
    this.upsert = new MultiRowInsert(
      db,
      'INSERT INTO threads (source, comment_id, thread_id, ts_ms, timestamp, from_addr, participants)',
      `ON CONFLICT (source, comment_id) DO UPDATE SET thread_id = excluded.thread_id, ts_ms = excluded.ts_ms,
         timestamp = excluded.timestamp, from_addr = excluded.from_addr, participants = excluded.participants`,
      7,
    );
  }

  /** Writes the thread index entries the items carry (call inside the caller's transaction). */
  indexItems(items: OutboxInput[]): void {
    for (const [source, entries] of threadsBySource(items)) this.put(source, entries);
  }

  indexThread(source: string, entries: ThreadEntry[]): void {
    this.db.transaction(() => this.put(source, entries)).immediate();
  }

  private put(source: string, entries: ThreadEntry[]): void {
    this.upsert.run(
      entries.map((e) => [
        source,
        e.commentId,
        e.threadId,
        Date.parse(e.timestamp),
        e.timestamp,
        e.from ?? null,
        JSON.stringify(e.participants),
      ]),
    );
  }

  threadMembers(source: string, threadIds: string[]): Map<string, ThreadEntry[]> {
    const rows = statement(
      this.db,
      `SELECT comment_id, thread_id, timestamp, from_addr, participants FROM threads
       WHERE source = ? AND thread_id IN (SELECT value FROM json_each(?)) ORDER BY thread_id, ts_ms, comment_id`,
    ).all(source, JSON.stringify(threadIds)) as Array<{
      comment_id: string;
      thread_id: string;
      timestamp: string;
      from_addr: string | null;
      participants: string;
    }>;
    const members = new Map<string, ThreadEntry[]>();
    for (const r of rows) {
      const entry: ThreadEntry = {
        commentId: r.comment_id,
        threadId: r.thread_id,
        timestamp: r.timestamp,
        participants: JSON.parse(r.participants) as string[],
      };
      if (r.from_addr !== null) entry.from = r.from_addr;
      const list = members.get(r.thread_id) ?? [];
      list.push(entry);
      members.set(r.thread_id, list);
    }
    return members;
  }
}
