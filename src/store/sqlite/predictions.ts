/** SQLite predictions: the latest per (route, comment id). */
import type Database from 'better-sqlite3';
import { statement } from './statements.js';
import { checkLimit } from '../common.js';
import type { Backend } from '../compose.js';
import type { PredictionQuery, PredictionInput, PredictionStore, StoredPrediction } from '../types.js';

const iso = (ms: number): string => new Date(ms).toISOString();

export class SqlitePredictions implements Backend<PredictionStore> {
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {}

  savePredictions(route: string, items: PredictionInput[]): void {
    // REPLACE gives an updated prediction a new id, so `after` cursors see it as new.
    const put = statement(
      this.db,
      `INSERT OR REPLACE INTO predictions (route, comment_id, key, predictions, model, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
    );
    this.db
      .transaction(() => {
        const now = this.now();
        for (const p of items) put.run(route, p.commentId, p.key, JSON.stringify(p.predictions), JSON.stringify(p.model), now);
      })
      .immediate();
  }

  listPredictions(query: PredictionQuery): StoredPrediction[] {
    const where = ['id > @after'];
    const params: Record<string, unknown> = { after: query.after ?? 0, limit: checkLimit(query.limit) };
    if (query.route !== undefined) {
      where.push('route = @route');
      params.route = query.route;
    }
    if (query.commentIds !== undefined) {
      where.push('comment_id IN (SELECT value FROM json_each(@ids))');
      params.ids = JSON.stringify(query.commentIds);
    }
    const rows = statement(
      this.db,
      `SELECT id, route, comment_id, key, predictions, model, created_at FROM predictions
       WHERE ${where.join(' AND ')} ORDER BY id LIMIT @limit`,
    ).all(params) as Array<{
      id: number;
      route: string;
      comment_id: string;
      key: string;
      predictions: string;
      model: string;
      created_at: number;
    }>;
    return rows.map((r) => ({
      id: r.id,
      route: r.route,
      commentId: r.comment_id,
      key: r.key,
      predictions: JSON.parse(r.predictions) as StoredPrediction['predictions'],
      model: JSON.parse(r.model) as StoredPrediction['model'],
      createdAt: iso(r.created_at),
    }));
  }
}
