/**
 * PostgreSQL retention and size: pruning a few rows per statement (rows another replica is
 * pruning at the same moment are skipped, not waited for), and the size of mailgate's tables.
 * The space of deleted rows is reused by autovacuum and not given back to the file system
 * (docs/store.md "Retention": VACUUM FULL or pg_repack do that, under their own locks).
 */
import type pg from 'pg';
import { checkLimit, spaceProbeRow } from '../common.js';
import type { Backend } from '../compose.js';
import type { MaintenanceStore, PruneKind, StoreStats, ThreadCursor } from '../types.js';
import { withTransaction } from './db.js';
import { deleteItems } from './outbox.js';

const OLDEST: Record<PruneKind, string> = {
  delivered: `status = 'delivered' AND finished_at < $1 AND NOT action_due ORDER BY finished_at`,
  dead: `status = 'dead' AND finished_at < $1 ORDER BY id`,
  predictions: '',
  parseAttempts: '',
};

export class PgMaintenance implements Backend<MaintenanceStore> {
  constructor(private readonly pool: pg.Pool) {}

  async pruneBatch(kind: PruneKind, olderThan: Date, limit: number): Promise<number> {
    checkLimit(limit);
    if (kind === 'predictions') {
      const res = await this.pool.query(
        `DELETE FROM predictions WHERE id IN (
           SELECT id FROM (SELECT id, created_at FROM predictions ORDER BY id LIMIT $2) p WHERE created_at < $1
         )`,
        [olderThan, limit],
      );
      return res.rowCount ?? 0;
    }
    if (kind === 'parseAttempts') {
      // Counts of messages never stored: few rows, read whole (no age index on a table written
      // before every parse). The age is checked again on the locked row: one counted meanwhile stays.
      const res = await this.pool.query(
        `DELETE FROM parse_attempts WHERE (route, key) IN (
           SELECT route, key FROM parse_attempts WHERE updated_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED
         ) AND updated_at < $1`,
        [olderThan, limit],
      );
      return res.rowCount ?? 0;
    }
    return deleteItems(this.pool, `id IN (SELECT id FROM outbox WHERE ${OLDEST[kind]} LIMIT $2 FOR UPDATE SKIP LOCKED)`, [
      olderThan,
      limit,
    ]);
  }

  async pruneThreads(olderThan: Date, limit: number, after?: ThreadCursor): Promise<{ deleted: number; next: ThreadCursor | null }> {
    checkLimit(limit);
    const from = after ?? { source: '', threadId: '' };
    // One statement: the next threads after the cursor, and the whole of each that is old enough
    // with none of its messages still an item (the console's search row, by comment id).
    const { rows } = await this.pool.query<{ looked: string; deleted: string; source: string | null; thread_id: string | null }>(
      `WITH g AS (
         SELECT source, thread_id, MAX(ts) AS newest FROM threads WHERE (source, thread_id) > ($1, $2)
         GROUP BY source, thread_id ORDER BY source, thread_id LIMIT $3),
       d AS (
         DELETE FROM threads t USING g
         WHERE t.source = g.source AND t.thread_id = g.thread_id AND g.newest < $4
           AND NOT EXISTS (SELECT 1 FROM threads m JOIN outbox_search s ON s.s_comment_id = lower(m.comment_id)
                           WHERE m.source = g.source AND m.thread_id = g.thread_id)
         RETURNING 1),
       last AS (SELECT source, thread_id FROM g ORDER BY source DESC, thread_id DESC LIMIT 1)
       SELECT (SELECT COUNT(*) FROM g) AS looked, (SELECT COUNT(*) FROM d) AS deleted, last.source, last.thread_id
       FROM (SELECT 1) one LEFT JOIN last ON true`,
      [from.source, from.threadId, limit, olderThan],
    );
    const r = rows[0]!;
    const next = Number(r.looked) < limit || r.source === null ? null : { source: r.source, threadId: r.thread_id! };
    return { deleted: Number(r.deleted), next };
  }

  async pruneCheckpoints(prefix: string, olderThan: Date, limit: number): Promise<number> {
    if (prefix === '') throw new RangeError('pruneCheckpoints needs a key prefix');
    checkLimit(limit);
    // The age is checked again on the locked row: one written meanwhile stays.
    const res = await this.pool.query(
      `DELETE FROM checkpoints WHERE key IN (
         SELECT key FROM checkpoints WHERE starts_with(key, $1) AND updated_at < $2 LIMIT $3 FOR UPDATE SKIP LOCKED)
       AND updated_at < $2`,
      [prefix, olderThan, limit],
    );
    return res.rowCount ?? 0;
  }

  reclaimSpace(): number {
    return 0;
  }

  /** Search rows are indexed at enqueue here. */
  foldSearches(limit: number): number {
    checkLimit(limit);
    return 0;
  }

  /** Thread index entries are indexed at enqueue here. */
  foldThreads(limit: number): number {
    checkLimit(limit);
    return 0;
  }

  async probeSpace(bytes: number): Promise<void> {
    const { key, value } = spaceProbeRow(bytes);
    // One transaction: the row is written (heap, TOAST, WAL) and gone at commit.
    await withTransaction(this.pool, async (c) => {
      await c.query('INSERT INTO checkpoints (key, value) VALUES ($1, $2)', [key, value]);
      await c.query('DELETE FROM checkpoints WHERE key = $1', [key]);
    });
  }

  async storeStats(): Promise<StoreStats> {
    const { rows } = await this.pool.query<{ bytes: string | null; queued: Date | null; delivered: Date | null; dead: Date | null }>(
      `SELECT
         (SELECT SUM(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname = current_schema()) AS bytes,
         (SELECT enqueued_at FROM outbox WHERE status = 'queued' ORDER BY id LIMIT 1) AS queued,
         (SELECT finished_at FROM outbox WHERE status = 'delivered' ORDER BY finished_at LIMIT 1) AS delivered,
         (SELECT MIN(finished_at) FROM outbox WHERE status = 'dead') AS dead`,
    );
    const r = rows[0]!;
    const oldest: StoreStats['oldest'] = {};
    if (r.queued !== null) oldest.queued = r.queued.toISOString();
    if (r.delivered !== null) oldest.delivered = r.delivered.toISOString();
    if (r.dead !== null) oldest.dead = r.dead.toISOString();
    return { bytes: Number(r.bytes ?? 0), oldest };
  }
}
