/**
 * The SQLite thread index. An enqueue writes its entries to `threads_new`, at the end of a table
 * with no other index; `foldThreads` moves them, oldest first and many a transaction, into
 * `threads` and its index by thread, where the last entry given for a comment wins (as when each
 * was written there at once). Every read of `threads` folds what is left first, so a read always
 * sees every entry: FOLD_BATCH a transaction with the event loop free between them, the last one
 * (fewer rows) right before the read; the thread index's pruning folds in its own transaction,
 * and `mailgate serve`'s retention rounds fold in between (src/pipeline/retention.ts).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { FOLD_BATCH } from './console.js';
import type { LightWrites } from './light.js';
import { MultiRowInsert } from './multi-row.js';
import { statement } from './statements.js';
import type { Backend } from '../compose.js';
import type { OutboxInput, ThreadEntry, ThreadStore } from '../types.js';
import { threadsBySource } from '../common.js';

/** The columns of `threads` and of `threads_new` (without its `seq`), in `put`'s order. */
const THREAD_COLUMNS = 'source, comment_id, thread_id, ts_ms, timestamp, from_addr, participants';

/** A fold's statements: one transaction of at most `limit` entries, and whether any entry waits. */
interface Fold {
  tx: Database.Transaction<(limit: number) => number>;
  waiting: Database.Statement;
}

function foldStatements(db: Database.Database): Fold {
  // The oldest `limit` entries waiting, moved in one transaction: the entries and their removal
  // from the waiting table commit together, so a fold cut short leaves each entry in one of the
  // two. In their order, so that of two entries for one comment the later wins. (The WHERE clause
  // keeps SQLite from reading ON CONFLICT as a join's constraint.)
  const last = db.prepare('SELECT MAX(seq) FROM (SELECT seq FROM threads_new ORDER BY seq LIMIT ?)').pluck();
  const move = db.prepare(
    `INSERT INTO threads (${THREAD_COLUMNS}) SELECT ${THREAD_COLUMNS} FROM threads_new WHERE seq <= ? ORDER BY seq
     ON CONFLICT (source, comment_id) DO UPDATE SET thread_id = excluded.thread_id, ts_ms = excluded.ts_ms,
       timestamp = excluded.timestamp, from_addr = excluded.from_addr, participants = excluded.participants`,
  );
  const drop = db.prepare('DELETE FROM threads_new WHERE seq <= ?');
  const tx = db.transaction((limit: number): number => {
    const upTo = last.get(limit) as number | null;
    if (upTo === null) return 0;
    move.run(upTo);
    return drop.run(upTo).changes;
  });
  return { tx, waiting: db.prepare('SELECT 1 FROM threads_new LIMIT 1').pluck() };
}

export class SqliteThreads implements Backend<ThreadStore> {
  /** The entries waiting to be folded, appended in the order given. */
  private readonly append: MultiRowInsert;
  /** Compiled at the first read or fold (`mailgate import` never reads). */
  private fold?: Fold;

  constructor(
    private readonly db: Database.Database,
    /** Folds commit without syncing the WAL (./light.ts): a fold lost to a power cut leaves its entries waiting. */
    private readonly writes: LightWrites,
  ) {
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

  /**
   * Moves at most `limit` waiting entries, oldest first, into `threads` in one light IMMEDIATE
   * transaction (or a savepoint of the caller's); returns how many.
   */
  foldThreads(limit: number): number {
    this.fold ??= foldStatements(this.db);
    return this.writes.run(this.fold.tx, limit);
  }

  /**
   * Folds every waiting entry, FOLD_BATCH a transaction (savepoints of the caller's, inside one):
   * what the thread index's pruning calls inside its own transaction.
   */
  foldAll(): void {
    this.fold ??= foldStatements(this.db);
    if (this.fold.waiting.get() === undefined) return;
    let moved: number;
    do moved = this.foldThreads(FOLD_BATCH);
    while (moved === FOLD_BATCH);
  }

  /**
   * Folds what waits, FOLD_BATCH a transaction, the event loop free between them: what a read of
   * `threads` awaits first. It ends on a transaction that found fewer entries than it could move,
   * with no turn of the loop after it: the read that follows finds none waiting.
   */
  private async foldInSteps(): Promise<void> {
    this.fold ??= foldStatements(this.db);
    while (this.fold.waiting.get() !== undefined && this.foldThreads(FOLD_BATCH) === FOLD_BATCH) await yieldToLoop();
  }

  async threadMembers(source: string, threadIds: string[]): Promise<Map<string, ThreadEntry[]>> {
    await this.foldInSteps();
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
