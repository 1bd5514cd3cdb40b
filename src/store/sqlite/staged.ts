/**
 * Rows staged for later: an enqueue appends them to a table with no index but its key (the end of
 * one b-tree), and a fold moves them, oldest first and many a transaction, into the indexed table
 * whose random-keyed indexes would otherwise cost a random page each per message. The console's
 * search rows (./console.ts) and the thread index's entries (./threads.ts) are staged so.
 *
 * Every read of the indexed table folds what is left first (`inSteps`), so a read always sees
 * every row: FOLD_BATCH a transaction with the event loop free between them, the last one (fewer
 * rows) right before the read. The thread index's pruning folds inside its own transaction
 * (`all`), and `mailgate serve`'s retention rounds fold in between (src/pipeline/retention.ts).
 * A fold's transaction is light (./light.ts): one lost to a power cut leaves its rows waiting.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import type { LightWrites } from './light.js';

/**
 * Rows one fold moves per transaction: a read and a retention round free the event loop
 * between transactions.
 */
export const FOLD_BATCH = 2_000;

export interface StagedTable {
  /** The waiting table, and the column that orders its rows (as they were appended). */
  waiting: string;
  order: string;
  /** The indexed table, and the columns a fold moves (the same in both tables). */
  into: string;
  columns: string;
  /** For a row already in `into`: `ON CONFLICT (...) DO UPDATE SET ...`, so that the later row wins. */
  onConflict: string;
}

/** A fold's statements: one transaction of at most `limit` rows, and whether any row waits. */
interface Fold {
  tx: Database.Transaction<(limit: number) => number>;
  waiting: Database.Statement;
}

function foldStatements(db: Database.Database, t: StagedTable): Fold {
  // The oldest `limit` rows waiting, moved in one transaction: the rows and their removal from the
  // waiting table commit together, so a fold cut short leaves each row in one of the two. In their
  // order, so that of two rows for one key the later wins. (The WHERE clause keeps SQLite from
  // reading ON CONFLICT as a join's constraint.)
  const last = db.prepare(`SELECT MAX(${t.order}) FROM (SELECT ${t.order} FROM ${t.waiting} ORDER BY ${t.order} LIMIT ?)`).pluck();
  const move = db.prepare(
    `INSERT INTO ${t.into} (${t.columns}) SELECT ${t.columns} FROM ${t.waiting} WHERE ${t.order} <= ? ORDER BY ${t.order}
     ${t.onConflict}`,
  );
  const drop = db.prepare(`DELETE FROM ${t.waiting} WHERE ${t.order} <= ?`);
  const tx = db.transaction((limit: number): number => {
    const upTo = last.get(limit) as number | null;
    if (upTo === null) return 0;
    move.run(upTo);
    return drop.run(upTo).changes;
  });
  return { tx, waiting: db.prepare(`SELECT 1 FROM ${t.waiting} LIMIT 1`).pluck() };
}

export class StagedRows {
  /** Compiled at the first read or fold (`mailgate import` never reads). */
  private fold?: Fold;

  constructor(
    private readonly db: Database.Database,
    private readonly table: StagedTable,
    private readonly writes: LightWrites,
  ) {}

  private get statements(): Fold {
    return (this.fold ??= foldStatements(this.db, this.table));
  }

  /**
   * Moves at most `limit` waiting rows, oldest first, in one light IMMEDIATE transaction (or a
   * savepoint of the caller's); returns how many.
   */
  step(limit: number): number {
    return this.writes.run(this.statements.tx, limit);
  }

  /**
   * Folds every waiting row, FOLD_BATCH a transaction (savepoints of the caller's, inside one):
   * what the thread index's pruning calls inside its own transaction, which cannot let the event
   * loop go between steps.
   */
  all(): void {
    if (this.statements.waiting.get() === undefined) return;
    let moved: number;
    do moved = this.step(FOLD_BATCH);
    while (moved === FOLD_BATCH);
  }

  /**
   * Folds what waits, FOLD_BATCH a transaction, the event loop free between them: what a read of
   * the indexed table awaits first, so that a large backlog (an import's: 100,000 rows take
   * seconds) holds the process one transaction at a time. It ends on a transaction that found
   * fewer rows than it could move, with no turn of the loop after it: the read that follows finds
   * none waiting.
   */
  async inSteps(): Promise<void> {
    const { waiting } = this.statements;
    while (waiting.get() !== undefined && this.step(FOLD_BATCH) === FOLD_BATCH) await yieldToLoop();
  }
}
