/** SQLite dead letters: outbox rows with status `dead`, raw bytes kept. */
import type Database from 'better-sqlite3';
import { statement } from './statements.js';
import { checkLimit, checkPurgeFilter, checkReplay, jsonOrNull, notFound } from '../common.js';
import type { Backend } from '../compose.js';
import { searchFields, withSearchFields } from '../console.js';
import type { DeadLetter, DeadLetterDetail, DeadLetterQuery, DeadLetterStore, OutboxInput, PurgeFilter, ReplayResult } from '../types.js';
import { ITEM_COLUMNS, toDeadLetter, toDeadLetterDetail, type DocRow, type OutboxRow } from './rows.js';
import type { SqliteOutbox } from './outbox.js';

export class SqliteDeadLetters implements Backend<DeadLetterStore> {
  constructor(
    private readonly db: Database.Database,
    private readonly outbox: SqliteOutbox,
    private readonly now: () => number,
  ) {}

  listDeadLetters(query: DeadLetterQuery): DeadLetter[] {
    const limit = checkLimit(query.limit);
    const rows = statement(
      this.db,
      `SELECT ${ITEM_COLUMNS}, EXISTS (SELECT 1 FROM outbox_raw r WHERE r.id = outbox.id) AS has_raw FROM outbox
       WHERE status = 'dead' AND id > @after ${query.route === undefined ? '' : 'AND route = @route'}
       ORDER BY id LIMIT @limit`,
    ).all({ after: query.after ?? 0, limit, ...(query.route === undefined ? {} : { route: query.route }) }) as OutboxRow[];
    return rows.map(toDeadLetter);
  }

  getDeadLetter(id: number): DeadLetterDetail | undefined {
    return this.db.transaction((): DeadLetterDetail | undefined => {
      const row = statement(
        this.db,
        `SELECT ${ITEM_COLUMNS}, EXISTS (SELECT 1 FROM outbox_raw r WHERE r.id = outbox.id) AS has_raw FROM outbox WHERE status = 'dead' AND id = ?`,
      ).get(id) as OutboxRow | undefined;
      if (row === undefined) return undefined;
      const doc = statement(
        this.db,
        `SELECT d.document, d.preview, r.raw FROM outbox_docs d LEFT JOIN outbox_raw r ON r.id = d.id WHERE d.id = ?`,
      ).get(id) as DocRow | undefined;
      if (doc === undefined) throw new Error(`dead letter ${id} has no document row`);
      return toDeadLetterDetail(row, doc);
    })();
  }

  replayDeadLetter(id: number, replacement: OutboxInput): ReplayResult | Promise<ReplayResult> {
    return withSearchFields([replacement], () => this.replayNow(id, replacement));
  }

  private replayNow(id: number, replacement: OutboxInput): ReplayResult {
    const fields = searchFields(replacement);
    return this.db
      .transaction((): ReplayResult => {
        const row = statement(this.db, `SELECT route, key FROM outbox WHERE status = 'dead' AND id = ?`).get(id) as
          | { route: string; key: string }
          | undefined;
        if (row === undefined) throw notFound(`dead letter ${id}`);
        checkReplay(row, replacement);
        const now = this.now();
        const dead = replacement.error !== undefined;
        statement(
          this.db,
          `UPDATE outbox SET status = @status, attempts = 0, next_attempt_at = @now, finished_at = @finished,
           lease_owner = NULL, lease_expires_at = NULL, outcome = NULL, last_error = @error,
           comment_id = @commentId, origin = @origin, warnings = @warnings
         WHERE id = @id`,
        ).run({
          id,
          now,
          status: dead ? 'dead' : 'queued',
          finished: dead ? now : null,
          error: jsonOrNull(replacement.error),
          commentId: replacement.commentId,
          origin: JSON.stringify(replacement.origin),
          warnings: replacement.warnings === undefined || replacement.warnings.length === 0 ? null : JSON.stringify(replacement.warnings),
        });
        // Raw bytes: the replacement's when given, else the dead letter's own stay.
        this.outbox.putBodies([{ id, item: replacement }]);
        this.outbox.parts.console.putSearches([{ id, fields }]);
        this.outbox.parts.threads.indexItems([replacement]);
        this.outbox.parts.counters.bump(row.route, dead ? 'dead_lettered' : 'enqueued', 1);
        return { id, status: dead ? 'dead' : 'queued' };
      })
      .immediate();
  }

  purgeDeadLetters(filter: PurgeFilter): number {
    checkPurgeFilter(filter);
    const where = [`status = 'dead'`];
    const params: Record<string, unknown> = {};
    if (filter.ids !== undefined) {
      where.push('id IN (SELECT value FROM json_each(@ids))');
      params.ids = JSON.stringify(filter.ids);
    }
    if (filter.route !== undefined) {
      where.push('route = @route');
      params.route = filter.route;
    }
    if (filter.olderThan !== undefined) {
      where.push('finished_at < @before');
      params.before = filter.olderThan.getTime();
    }
    return this.db
      .transaction(() => {
        this.outbox.deleteBodies(where.join(' AND '), params);
        return statement(this.db, `DELETE FROM outbox WHERE ${where.join(' AND ')}`).run(params).changes;
      })
      .immediate();
  }
}
