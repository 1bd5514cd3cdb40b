/** PostgreSQL dead letters: outbox rows with status `dead`, raw bytes kept. */
import type pg from 'pg';
import { checkLimit, checkPurgeFilter, checkReplay, notFound } from '../common.js';
import type { Backend } from '../compose.js';
import { searchFields, withSearchFields } from '../console.js';
import type { DeadLetter, DeadLetterDetail, DeadLetterQuery, DeadLetterStore, OutboxInput, PurgeFilter, ReplayResult } from '../types.js';
import { putSearch } from './console.js';
import { bumpCounters } from './counters.js';
import { nowParam, pgNow, withTransaction, type PgClock } from './db.js';
import { deleteItems } from './outbox.js';
import type { PgThreads } from './threads.js';
import { PG_ITEM_COLUMNS, pgToDeadLetter, pgToDeadLetterDetail, type PgOutboxRow } from './rows.js';

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

export class PgDeadLetters implements Backend<DeadLetterStore> {
  constructor(
    private readonly pool: pg.Pool,
    private readonly threads: PgThreads,
    private readonly clock: PgClock,
  ) {}

  async listDeadLetters(query: DeadLetterQuery): Promise<DeadLetter[]> {
    const params: unknown[] = [query.after ?? 0, checkLimit(query.limit)];
    if (query.route !== undefined) params.push(query.route);
    const { rows } = await this.pool.query<PgOutboxRow>(
      `SELECT ${PG_ITEM_COLUMNS}, EXISTS (SELECT 1 FROM outbox_raw r WHERE r.id = outbox.id) AS has_raw FROM outbox
       WHERE status = 'dead' AND id > $1 ${query.route === undefined ? '' : 'AND route = $3'}
       ORDER BY id LIMIT $2`,
      params,
    );
    return rows.map(pgToDeadLetter);
  }

  async getDeadLetter(id: number): Promise<DeadLetterDetail | undefined> {
    const { rows } = await this.pool.query<PgOutboxRow>(
      `SELECT ${PG_ITEM_COLUMNS.split(', ')
        .map((c) => `o.${c}`)
        .join(', ')}, d.document, d.preview, r.raw, r.id IS NOT NULL AS has_raw
       FROM outbox o LEFT JOIN outbox_docs d ON d.id = o.id LEFT JOIN outbox_raw r ON r.id = o.id
       WHERE o.status = 'dead' AND o.id = $1`,
      [id],
    );
    return rows[0] === undefined ? undefined : pgToDeadLetterDetail(rows[0]);
  }

  replayDeadLetter(id: number, replacement: OutboxInput): Promise<ReplayResult> {
    return withSearchFields([replacement], () => this.replayNow(id, replacement));
  }

  private replayNow(id: number, replacement: OutboxInput): Promise<ReplayResult> {
    const search = [searchFields(replacement)];
    return withTransaction(this.pool, async (client): Promise<ReplayResult> => {
      const { rows } = await client.query<{ route: string; key: string }>(
        `SELECT route, key FROM outbox WHERE status = 'dead' AND id = $1 FOR UPDATE`,
        [id],
      );
      const row = rows[0];
      if (row === undefined) throw notFound(`dead letter ${id}`);
      checkReplay(row, replacement);
      const dead = replacement.error !== undefined;
      await client.query(
        `UPDATE outbox SET status = $2, attempts = 0, next_attempt_at = ${pgNow(7)},
           finished_at = CASE WHEN $2 = 'dead' THEN clock_timestamp() END,
           lease_owner = NULL, lease_expires_at = NULL, outcome = NULL, last_error = $3::json,
           comment_id = $4, origin = $5::json, warnings = $6::json
         WHERE id = $1`,
        [
          id,
          dead ? 'dead' : 'queued',
          json(replacement.error),
          replacement.commentId,
          JSON.stringify(replacement.origin),
          replacement.warnings === undefined || replacement.warnings.length === 0 ? null : JSON.stringify(replacement.warnings),
          nowParam(this.clock),
        ],
      );
      await client.query(
        `INSERT INTO outbox_docs (id, document, preview, text_hash, doc_hash) VALUES ($1, $2::json, $3::json, $4, $5)
         ON CONFLICT (id) DO UPDATE SET document = excluded.document, preview = excluded.preview,
           text_hash = excluded.text_hash, doc_hash = excluded.doc_hash`,
        [
          id,
          replacement.json?.document ?? JSON.stringify(replacement.document),
          json(replacement.preview),
          replacement.hashes?.textHash ?? null,
          replacement.hashes?.docHash ?? null,
        ],
      );
      // Raw bytes: the replacement's when given, else the dead letter's own stay.
      if (replacement.raw !== undefined) {
        await client.query(`INSERT INTO outbox_raw (id, raw) VALUES ($1, $2::bytea) ON CONFLICT (id) DO UPDATE SET raw = excluded.raw`, [
          id,
          replacement.raw,
        ]);
      }
      await putSearch(client, search, true);
      await this.threads.indexItems(client, [replacement]);
      await bumpCounters(client, { [dead ? 'dead_lettered' : 'enqueued']: new Map([[row.route, 1]]) });
      return { id, status: dead ? 'dead' : 'queued' };
    });
  }

  async purgeDeadLetters(filter: PurgeFilter): Promise<number> {
    checkPurgeFilter(filter);
    const where = [`status = 'dead'`];
    const params: unknown[] = [];
    if (filter.ids !== undefined) {
      params.push(filter.ids);
      where.push(`id = ANY($${params.length}::bigint[])`);
    }
    if (filter.route !== undefined) {
      params.push(filter.route);
      where.push(`route = $${params.length}`);
    }
    if (filter.olderThan !== undefined) {
      params.push(filter.olderThan);
      where.push(`finished_at < $${params.length}`);
    }
    return deleteItems(this.pool, where.join(' AND '), params);
  }
}
