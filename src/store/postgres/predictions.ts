/** PostgreSQL predictions: the latest per (route, comment id). */
import type pg from 'pg';
import { checkLimit } from '../common.js';
import type { Backend } from '../compose.js';
import type { PredictionInput, PredictionQuery, PredictionStore, StoredPrediction } from '../types.js';
import { iso, toId, withTransaction } from './db.js';

export class PgPredictions implements Backend<PredictionStore> {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Latest per (route, comment id); an update gets a new id so `after` cursors see it.
   * Saves of one route are serialized by a transaction lock taken before any id is drawn, so
   * ids become visible in commit order: a cursor reader never passes an id that commits later.
   */
  savePredictions(route: string, items: PredictionInput[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    const ids = items.map((p) => p.commentId);
    return withTransaction(this.pool, async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('mailgate.predictions'), hashtext($1))`, [route]);
      await client.query('DELETE FROM predictions WHERE route = $1 AND comment_id = ANY($2::text[])', [route, ids]);
      const last = new Map(items.map((p) => [p.commentId, p]));
      const list = [...last.values()];
      await client.query(
        `INSERT INTO predictions (route, comment_id, key, predictions, model)
         SELECT $1, c, k, p, m FROM unnest($2::text[], $3::text[], $4::json[], $5::json[]) WITH ORDINALITY AS u(c, k, p, m, ord) ORDER BY ord`,
        [
          route,
          list.map((p) => p.commentId),
          list.map((p) => p.key),
          list.map((p) => JSON.stringify(p.predictions)),
          list.map((p) => JSON.stringify(p.model)),
        ],
      );
    });
  }

  async listPredictions(query: PredictionQuery): Promise<StoredPrediction[]> {
    const params: unknown[] = [query.after ?? 0, checkLimit(query.limit)];
    const where = ['id > $1'];
    if (query.route !== undefined) where.push(`route = $${params.push(query.route)}`);
    if (query.commentIds !== undefined) where.push(`comment_id = ANY($${params.push(query.commentIds)}::text[])`);
    const { rows } = await this.pool.query<{
      id: string;
      route: string;
      comment_id: string;
      key: string;
      predictions: StoredPrediction['predictions'];
      model: StoredPrediction['model'];
      created_at: Date;
    }>(
      `SELECT id, route, comment_id, key, predictions, model, created_at FROM predictions
       WHERE ${where.join(' AND ')} ORDER BY id LIMIT $2`,
      params,
    );
    return rows.map((r) => ({
      id: toId(r.id),
      route: r.route,
      commentId: r.comment_id,
      key: r.key,
      predictions: r.predictions,
      model: r.model,
      createdAt: iso(r.created_at),
    }));
  }
}
