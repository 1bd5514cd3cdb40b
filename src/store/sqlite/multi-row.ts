/**
 * Many rows in few statements: `INSERT … VALUES (…), (…), …` with up to 64 rows a statement. A
 * statement run per row costs the driver's call, binding and SQLite's statement set-up and
 * reset every time; for the small rows of a batch (search fields, thread entries, ledger
 * entries) that is about a quarter of their CPU. Rows are written in their order, so an upsert
 * given the same key twice keeps the later row, as a statement per row would.
 */
import type Database from 'better-sqlite3';

/** Rows per statement, largest first: a batch of n rows takes at most n / 64 + 6 statements, of 7 texts. */
const SIZES = [64, 32, 16, 8, 4, 2, 1] as const;

export class MultiRowInsert {
  /** The compiled statement of each size, made on first use. */
  private readonly bySize = new Map<number, Database.Statement>();

  /**
   * `head`: up to `VALUES` (`INSERT INTO t (a, b)`); `tail`: what follows the rows (a conflict
   * clause, or ''); `width`: values per row.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly head: string,
    private readonly tail: string,
    private readonly width: number,
  ) {}

  /** Inserts `rows` (each `width` values), in their order. */
  run(rows: ReadonlyArray<readonly unknown[]>): void {
    this.runEach(rows, () => undefined);
  }

  /**
   * Inserts `rows` in their order, telling `each` what every statement did: the rows it covered
   * (`rows[at]` to `rows[at + size - 1]`) and the driver's answer (changes, last insert rowid).
   */
  runEach(rows: ReadonlyArray<readonly unknown[]>, each: (at: number, size: number, info: Database.RunResult) => void): void {
    const width = this.width;
    let at = 0;
    for (let s = 0; s < SIZES.length; s++) {
      const size = SIZES[s]!;
      while (rows.length - at >= size) {
        // Sized once and filled by index: grown by push, the array of a 64-row statement was
        // copied as it grew, and iterating each row allocated an iterator.
        const values: unknown[] = new Array<unknown>(size * width);
        let k = 0;
        for (let i = at; i < at + size; i++) {
          const row = rows[i]!;
          if (row.length !== width) throw new Error(`a row of ${row.length} values, not ${width}`);
          for (let j = 0; j < width; j++) values[k++] = row[j];
        }
        each(at, size, this.statement(size).run(values));
        at += size;
      }
    }
  }

  private statement(size: number): Database.Statement {
    let st = this.bySize.get(size);
    if (st === undefined) {
      const row = `(${Array.from({ length: this.width }, () => '?').join(', ')})`;
      st = this.db.prepare(`${this.head} VALUES ${Array.from({ length: size }, () => row).join(', ')} ${this.tail}`);
      this.bySize.set(size, st);
    }
    return st;
  }
}
