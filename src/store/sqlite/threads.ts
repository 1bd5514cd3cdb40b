/**
 * The SQLite thread index. An enqueue writes its entries to `threads_new`, at the end of a table
 * with no other index; `foldThreads` moves them into `threads` and its index by thread later,
 * where the last entry given for a comment wins (as when each was written there at once), and
 * every read of `threads` folds what is left first, so a read always sees every entry (./staged.ts).
 */
import type Database from 'better-sqlite3';
import type { LightWrites } from './light.js';
import { MultiRowInsert } from './multi-row.js';
import { StagedRows, type StagedTable } from './staged.js';
import { statement } from './statements.js';
import type { Backend } from '../compose.js';
import type { OutboxInput, ThreadEntry, ThreadStore } from '../types.js';
import { threadsBySource } from '../common.js';

/** The columns of `threads` and of `threads_new` (without its `seq`), in `put`'s order. */
const THREAD_COLUMNS = 'source, comment_id, thread_id, ts_ms, timestamp, from_addr, participants';

/** The entries waiting in `threads_new`, in the order given: of two for one comment the later wins. */
const THREAD_ENTRIES: StagedTable = {
  waiting: 'threads_new',
  order: 'seq',
  into: 'threads',
  columns: THREAD_COLUMNS,
  onConflict: `ON CONFLICT (source, comment_id) DO UPDATE SET thread_id = excluded.thread_id, ts_ms = excluded.ts_ms,
    timestamp = excluded.timestamp, from_addr = excluded.from_addr, participants = excluded.participants`,
};

export class SqliteThreads implements Backend<ThreadStore> {
  /** The entries waiting to be folded, appended in the order given. */
  private readonly append: MultiRowInsert;
  /** The entries waiting to be folded. */
  private readonly staged: StagedRows;

  constructor(
    private readonly db: Database.Database,
    /** Folds commit without syncing the WAL (./light.ts): a fold lost to a power cut leaves its entries waiting. */
    writes: LightWrites,
  ) {
    this.staged = new StagedRows(db, THREAD_ENTRIES, writes);
    this.append = new MultiRowInsert(db, `INSERT INTO threads_new (${THREAD_COLUMNS})`, '', 7);
  }

  /** Writes the thread index entries the items carry, for the next fold (call inside the caller's transaction). */
  indexItems(items: OutboxInput[]): void {
    for (const [source, entries] of threadsBySource(items)) this.put(source, entries);
  }

  indexThread(source: string, entries: ThreadEntry[]): void {
    this.db.transaction(() => this.put(source, entries)).immediate();
  }

  private put(source: string, entries: ThreadEntry[]): void {
    this.append.run(
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

  /** Moves at most `limit` waiting entries, oldest first, in one light transaction; returns how many. */
  foldThreads(limit: number): number {
    return this.staged.step(limit);
  }

  /** Folds every waiting entry (inside the caller's transaction): what the thread index's pruning calls. */
  foldAll(): void {
    this.staged.all();
  }

  async threadMembers(source: string, threadIds: string[]): Promise<Map<string, ThreadEntry[]>> {
    await this.staged.inSteps();
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
