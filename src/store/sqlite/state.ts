/** SQLite checkpoints, ledger, thread index, predictions and counters. */
import type Database from 'better-sqlite3';
import type { Checkpoint } from '../../model/origin.js';
import { checkLimit, ROUTE_COUNTER_COLUMNS, routeCountersFromRow } from '../common.js';
import type { LedgerEntry, PredictionInput, PredictionQuery, RouteCounters, StoredPrediction, ThreadEntry } from '../types.js';

const iso = (ms: number): string => new Date(ms).toISOString();

export class SqliteState {
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {}

  getCheckpoint(key: string): Checkpoint['value'] | undefined {
    const row = this.db.prepare('SELECT value FROM checkpoints WHERE key = ?').get(key) as { value: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.value) as Checkpoint['value']);
  }

  listCheckpoints(): Array<Checkpoint & { updatedAt: string }> {
    const rows = this.db.prepare('SELECT key, value, updated_at FROM checkpoints ORDER BY key').all() as Array<{
      key: string;
      value: string;
      updated_at: number;
    }>;
    return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as Checkpoint['value'], updatedAt: iso(r.updated_at) }));
  }

  lookup(source: string, commentIds: string[]): Map<string, LedgerEntry> {
    const rows = this.db
      .prepare(
        `SELECT comment_id, text_hash, doc_hash, outcome, updated_at FROM ledger
       WHERE source = ? AND comment_id IN (SELECT value FROM json_each(?))`,
      )
      .all(source, JSON.stringify(commentIds)) as Array<Record<string, string>>;
    const found = new Map<string, LedgerEntry>();
    for (const r of rows) {
      found.set(r.comment_id as string, {
        textHash: r.text_hash as string,
        docHash: r.doc_hash as string,
        outcome: r.outcome as LedgerEntry['outcome'],
        updatedAt: r.updated_at as string,
      });
    }
    return found;
  }

  record(source: string, entries: Array<LedgerEntry & { commentId: string }>): void {
    const put = this.db.prepare(
      `INSERT INTO ledger (source, comment_id, text_hash, doc_hash, outcome, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (source, comment_id) DO UPDATE SET text_hash = excluded.text_hash,
         doc_hash = excluded.doc_hash, outcome = excluded.outcome, updated_at = excluded.updated_at`,
    );
    this.db
      .transaction(() => {
        for (const e of entries) put.run(source, e.commentId, e.textHash, e.docHash, e.outcome, e.updatedAt);
      })
      .immediate();
  }

  indexThread(source: string, entries: ThreadEntry[]): void {
    const put = this.db.prepare(
      `INSERT INTO threads (source, comment_id, thread_id, ts_ms, timestamp, from_addr, participants) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (source, comment_id) DO UPDATE SET thread_id = excluded.thread_id, ts_ms = excluded.ts_ms,
         timestamp = excluded.timestamp, from_addr = excluded.from_addr, participants = excluded.participants`,
    );
    this.db
      .transaction(() => {
        for (const e of entries) {
          put.run(source, e.commentId, e.threadId, Date.parse(e.timestamp), e.timestamp, e.from ?? null, JSON.stringify(e.participants));
        }
      })
      .immediate();
  }

  threadMembers(source: string, threadIds: string[]): Map<string, ThreadEntry[]> {
    const rows = this.db
      .prepare(
        `SELECT comment_id, thread_id, timestamp, from_addr, participants FROM threads
       WHERE source = ? AND thread_id IN (SELECT value FROM json_each(?)) ORDER BY thread_id, ts_ms, comment_id`,
      )
      .all(source, JSON.stringify(threadIds)) as Array<{
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

  savePredictions(route: string, items: PredictionInput[]): void {
    // REPLACE gives an updated prediction a new id, so `after` cursors see it as new.
    const put = this.db.prepare(
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
    const rows = this.db
      .prepare(
        `SELECT id, route, comment_id, key, predictions, model, created_at FROM predictions
       WHERE ${where.join(' AND ')} ORDER BY id LIMIT @limit`,
      )
      .all(params) as Array<{
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

  counters(route?: string): RouteCounters[] {
    const rows = this.db
      .prepare(
        `SELECT ${ROUTE_COUNTER_COLUMNS} FROM route_counters
       ${route === undefined ? '' : 'WHERE route = @route'} ORDER BY route`,
      )
      .all(route === undefined ? {} : { route }) as Array<Record<string, number | string>>;
    return rows.map(routeCountersFromRow);
  }
}
