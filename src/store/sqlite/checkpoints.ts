/** SQLite checkpoints: an adapter's cursors, written alone (fenced) or inside an enqueue. */
import type Database from 'better-sqlite3';
import { statement } from './statements.js';
import type { Checkpoint } from '../../model/origin.js';
import type { Backend } from '../compose.js';
import type { CheckpointStore, Fence } from '../types.js';
import type { SqliteLeases } from './leases.js';

const iso = (ms: number): string => new Date(ms).toISOString();

export class SqliteCheckpoints implements Backend<CheckpointStore> {
  private readonly putStmt: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
    private readonly leases: SqliteLeases,
  ) {
    this.putStmt = db.prepare(
      `INSERT INTO checkpoints (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    );
  }

  /** Writes a checkpoint (call inside the caller's transaction). */
  put(key: string, value: Checkpoint['value']): void {
    this.putStmt.run(key, JSON.stringify(value), this.now());
  }

  getCheckpoint(key: string): Checkpoint['value'] | undefined {
    const row = statement(this.db, 'SELECT value FROM checkpoints WHERE key = ?').get(key) as { value: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.value) as Checkpoint['value']);
  }

  /** With a fence: checked and written in one transaction. */
  setCheckpoint(key: string, value: Checkpoint['value'], fence?: Fence): void {
    if (fence === undefined) return this.put(key, value);
    this.db
      .transaction(() => {
        this.leases.check(fence);
        this.put(key, value);
      })
      .immediate();
  }

  listCheckpoints(): Array<Checkpoint & { updatedAt: string }> {
    const rows = statement(this.db, 'SELECT key, value, updated_at FROM checkpoints ORDER BY key').all() as Array<{
      key: string;
      value: string;
      updated_at: number;
    }>;
    return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as Checkpoint['value'], updatedAt: iso(r.updated_at) }));
  }
}
