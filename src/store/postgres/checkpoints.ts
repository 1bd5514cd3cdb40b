/** PostgreSQL checkpoints: an adapter's cursors, written alone (fenced) or inside an enqueue. */
import type pg from 'pg';
import type { Checkpoint } from '../../model/origin.js';
import type { Backend } from '../compose.js';
import type { CheckpointStore, Fence } from '../types.js';
import { iso, withTransaction, type Queryable } from './db.js';
import type { PgLeases } from './leases.js';

/** Writes a checkpoint (inside the caller's transaction, or alone). */
export async function putCheckpoint(db: Queryable, key: string, value: Checkpoint['value']): Promise<void> {
  await db.query(checkpointUpsert(1), [key, JSON.stringify(value)]);
}

/** The checkpoint upsert, its key and JSON value in parameters `$first` and the next: alone, or a step of the enqueue's statement. */
export function checkpointUpsert(first: number): string {
  return `INSERT INTO checkpoints (key, value) VALUES ($${first}, $${first + 1}::json)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = clock_timestamp()`;
}

export class PgCheckpoints implements Backend<CheckpointStore> {
  constructor(
    private readonly pool: pg.Pool,
    private readonly leases: PgLeases,
  ) {}

  async getCheckpoint(key: string): Promise<Checkpoint['value'] | undefined> {
    const { rows } = await this.pool.query<{ value: Checkpoint['value'] }>('SELECT value FROM checkpoints WHERE key = $1', [key]);
    return rows[0]?.value;
  }

  /** With a fence: checked and written in one transaction. */
  setCheckpoint(key: string, value: Checkpoint['value'], fence?: Fence): Promise<void> {
    if (fence === undefined) return putCheckpoint(this.pool, key, value);
    return withTransaction(this.pool, async (client) => {
      await this.leases.check(client, fence);
      await putCheckpoint(client, key, value);
    });
  }

  async listCheckpoints(): Promise<Array<Checkpoint & { updatedAt: string }>> {
    const { rows } = await this.pool.query<{ key: string; value: Checkpoint['value']; updated_at: Date }>(
      'SELECT key, value, updated_at FROM checkpoints ORDER BY key',
    );
    return rows.map((r) => ({ key: r.key, value: r.value, updatedAt: iso(r.updated_at) }));
  }
}
