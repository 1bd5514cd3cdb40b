/** PostgreSQL checkpoints, ledger, thread index, predictions and counters. */
import type pg from 'pg';
import type { Checkpoint } from '../../model/origin.js';
import { checkLimit, ROUTE_COUNTER_COLUMNS, routeCountersFromRow } from '../common.js';
import type { LedgerEntry, PredictionInput, PredictionQuery, RouteCounters, StoredPrediction, ThreadEntry } from '../types.js';
import { iso, pgText, toId, withTransaction, type PgClock, type Queryable } from './db.js';

export class PgState {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: PgClock,
  ) {}

  async getCheckpoint(key: string): Promise<Checkpoint['value'] | undefined> {
    const { rows } = await this.pool.query<{ value: Checkpoint['value'] }>('SELECT value FROM checkpoints WHERE key = $1', [key]);
    return rows[0]?.value;
  }

  async listCheckpoints(): Promise<Array<Checkpoint & { updatedAt: string }>> {
    const { rows } = await this.pool.query<{ key: string; value: Checkpoint['value']; updated_at: Date }>(
      'SELECT key, value, updated_at FROM checkpoints ORDER BY key',
    );
    return rows.map((r) => ({ key: r.key, value: r.value, updatedAt: iso(r.updated_at) }));
  }

  /** Insert, or steal through a conditional update: only when expired or already ours. */
  async lookup(source: string, commentIds: string[]): Promise<Map<string, LedgerEntry>> {
    const { rows } = await this.pool.query<Record<string, string>>(
      `SELECT comment_id, text_hash, doc_hash, outcome, updated_at FROM ledger WHERE source = $1 AND comment_id = ANY($2::text[])`,
      [source, commentIds],
    );
    return new Map(
      rows.map((r) => [
        r.comment_id as string,
        {
          textHash: r.text_hash as string,
          docHash: r.doc_hash as string,
          outcome: r.outcome as LedgerEntry['outcome'],
          updatedAt: r.updated_at as string,
        },
      ]),
    );
  }

  async record(source: string, entries: Array<LedgerEntry & { commentId: string }>, db: Queryable = this.pool): Promise<void> {
    if (entries.length === 0) return;
    // One row per comment id (the last wins), sorted so concurrent writers lock in one order.
    const last = new Map(entries.map((e) => [e.commentId, e]));
    const list = [...last.values()].sort((a, b) => (a.commentId < b.commentId ? -1 : a.commentId > b.commentId ? 1 : 0));
    await db.query(
      `INSERT INTO ledger (source, comment_id, text_hash, doc_hash, outcome, updated_at)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
       ON CONFLICT (source, comment_id) DO UPDATE SET text_hash = excluded.text_hash,
         doc_hash = excluded.doc_hash, outcome = excluded.outcome, updated_at = excluded.updated_at`,
      [
        source,
        list.map((e) => e.commentId),
        list.map((e) => e.textHash),
        list.map((e) => e.docHash),
        list.map((e) => e.outcome),
        list.map((e) => e.updatedAt),
      ],
    );
  }

  async indexThread(source: string, entries: ThreadEntry[], db: Queryable = this.pool): Promise<void> {
    if (entries.length === 0) return;
    const last = new Map(entries.map((e) => [e.commentId, e]));
    const list = [...last.values()].sort((a, b) => (a.commentId < b.commentId ? -1 : a.commentId > b.commentId ? 1 : 0));
    await db.query(
      `INSERT INTO threads (source, comment_id, thread_id, ts, timestamp, from_addr, participants)
       SELECT $1, c, t, ts::timestamptz, ts, f, p FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::json[]) AS u(c, t, ts, f, p)
       ON CONFLICT (source, comment_id) DO UPDATE SET thread_id = excluded.thread_id, ts = excluded.ts,
         timestamp = excluded.timestamp, from_addr = excluded.from_addr, participants = excluded.participants`,
      [
        source,
        list.map((e) => e.commentId),
        list.map((e) => e.threadId),
        list.map((e) => e.timestamp),
        list.map((e) => (e.from === undefined ? null : pgText(e.from))),
        list.map((e) => JSON.stringify(e.participants)),
      ],
    );
  }

  async threadMembers(source: string, threadIds: string[]): Promise<Map<string, ThreadEntry[]>> {
    const { rows } = await this.pool.query<{
      comment_id: string;
      thread_id: string;
      timestamp: string;
      from_addr: string | null;
      participants: string[];
    }>(
      `SELECT comment_id, thread_id, timestamp, from_addr, participants FROM threads
       WHERE source = $1 AND thread_id = ANY($2::text[]) ORDER BY thread_id, ts, comment_id COLLATE "C"`,
      [source, threadIds],
    );
    const members = new Map<string, ThreadEntry[]>();
    for (const r of rows) {
      const entry: ThreadEntry = { commentId: r.comment_id, threadId: r.thread_id, timestamp: r.timestamp, participants: r.participants };
      if (r.from_addr !== null) entry.from = r.from_addr;
      members.set(r.thread_id, [...(members.get(r.thread_id) ?? []), entry]);
    }
    return members;
  }

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

  async counters(route?: string): Promise<RouteCounters[]> {
    const { rows } = await this.pool.query<Record<string, string>>(
      `SELECT ${ROUTE_COUNTER_COLUMNS} FROM route_counters
       ${route === undefined ? '' : 'WHERE route = $1'} ORDER BY route`,
      route === undefined ? [] : [route],
    );
    return rows.map(routeCountersFromRow);
  }
}
