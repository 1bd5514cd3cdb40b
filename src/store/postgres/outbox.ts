/**
 * The PostgreSQL outbox (the enqueue is `keyed.ts`): claims lock ready rows with FOR UPDATE
 * SKIP LOCKED so any number of replicas can claim concurrently without ever sharing an item.
 */
import type pg from 'pg';
import { storedOrigin } from '../../model/origin.js';
import { checkAiUnits, checkDelay, checkLimit, countByRoute, plainItem } from '../common.js';
import type { DeliveryInfo, ItemError, OutboxCount, OutboxItem, OutboxStatus, PendingAction, StoredItem, OutboxStore } from '../types.js';
import type { Backend } from '../compose.js';
import { nowParam, pgArray, pgNow, retryRolledBack, toId, withTransaction, type PgClock, type Queryable } from './db.js';
import { PG_ITEM_COLUMNS, pgToItem, type PgOutboxRow } from './rows.js';
import { attemptInsert } from './console.js';
import { aiUnitSteps, bumpCounters, countChanged } from './counters.js';
import { ledgerUpsert } from './ledger.js';

/**
 * Registers what a claim or renewal leased (`u`: id) for owner `$2` until now (`$now`) plus `$3`
 * ms: one `outbox_claims` row, so that the owner's claims can be taken back without an index on
 * the outbox's lease owner (which would make every claim rewrite each of the outbox's indexes).
 */
const registerClaims = (now: number): string => `INSERT INTO outbox_claims (owner, ids, expires_at)
    SELECT $2, array_agg(id), ${pgNow(now)} + $3 * interval '1 millisecond' FROM u HAVING COUNT(*) > 0`;

/**
 * A claim's item columns (of `u`), `enqueued_at` as ISO-8601 text in UTC, as `toISOString`
 * writes it (milliseconds, truncated): the server formats it rather than the client parsing
 * a timestamp for every item claimed.
 */
const CLAIM_COLUMNS = PG_ITEM_COLUMNS.split(', ')
  .map((c) =>
    c === 'enqueued_at' ? `to_char(u.enqueued_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS enqueued_at` : `u.${c}`,
  )
  .join(', ');

/** Due and not leased at `now` (SQL). */
const ready = (now: string): string => `status = 'queued' AND next_attempt_at <= ${now}
  AND (lease_expires_at IS NULL OR lease_expires_at <= ${now})`;

/**
 * Deletes outbox rows matching `where` together with their side rows (documents, raw bytes,
 * search rows, attempts; aliases go by their foreign key), in one statement; returns how many
 * outbox rows. The only place outbox rows are deleted.
 */
export async function deleteItems(db: Queryable, where: string, params: unknown[]): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `WITH d AS (DELETE FROM outbox WHERE ${where} RETURNING id),
       docs AS (DELETE FROM outbox_docs WHERE id IN (SELECT id FROM d)),
       raws AS (DELETE FROM outbox_raw WHERE id IN (SELECT id FROM d)),
       srch AS (DELETE FROM outbox_search WHERE id IN (SELECT id FROM d)),
       att AS (DELETE FROM outbox_attempts WHERE item_id IN (SELECT id FROM d))
     SELECT COUNT(*) AS n FROM d`,
    params,
  );
  return toId(rows[0]?.n ?? 0);
}

export class PgOutbox implements Backend<OutboxStore> {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: PgClock,
  ) {}

  async getItem(id: number): Promise<StoredItem | undefined> {
    const { rows } = await this.pool.query<PgOutboxRow & { status: OutboxStatus; outcome: string | null }>(
      `SELECT ${PG_ITEM_COLUMNS.split(', ')
        .map((c) => `o.${c}`)
        .join(', ')}, o.status, o.outcome, d.document::text AS document_text, d.preview, d.text_hash, d.doc_hash
       FROM outbox o JOIN outbox_docs d ON d.id = o.id WHERE o.id = $1`,
      [id],
    );
    const r = rows[0];
    if (r === undefined) return undefined;
    const item: StoredItem = { ...plainItem(pgToItem(r)), status: r.status };
    if (r.outcome === 'delivered' || r.outcome === 'unchanged') item.outcome = r.outcome;
    if (r.finished_at !== null) item.finishedAt = r.finished_at.toISOString();
    return item;
  }

  async claim(route: string | undefined, limit: number, owner: string, leaseMs: number): Promise<OutboxItem[]> {
    const params: unknown[] = [checkLimit(limit), owner, checkDelay('leaseMs', leaseMs, 1), nowParam(this.clock)];
    if (route !== undefined) params.push(route);
    const { rows } = await this.pool.query<PgOutboxRow>(
      `WITH c AS (
         SELECT id FROM outbox WHERE ${route === undefined ? '' : 'route = $5 AND'} ${ready(pgNow(4))}
         ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED),
       u AS (
         UPDATE outbox o SET lease_owner = $2, lease_expires_at = ${pgNow(4)} + $3 * interval '1 millisecond'
         FROM c WHERE o.id = c.id RETURNING ${PG_ITEM_COLUMNS.split(', ')
           .map((c) => `o.${c}`)
           .join(', ')}),
       reg AS (${registerClaims(4)}),
       gone AS (DELETE FROM outbox_claims WHERE owner = $2 AND expires_at <= ${pgNow(4)})
       SELECT ${CLAIM_COLUMNS}, d.document::text AS document_text, d.preview, d.text_hash, d.doc_hash
       FROM u LEFT JOIN outbox_docs d ON d.id = u.id`,
      params,
    );
    return rows.map(pgToItem).sort((a, b) => a.id - b.id);
  }

  /**
   * One statement (its own transaction, one round trip): the rows, their raw bytes, attempts,
   * counters, AI units and ledger entries, and the claim registrations these ids settle whole
   * (`outbox_claims`: a claim delivered in one piece leaves nothing for its owner's exit or death
   * to take back, which otherwise probes every id the owner claimed within its leases).
   */
  async markDelivered(ids: number[], info: DeliveryInfo): Promise<number> {
    if (ids.length === 0 && info.aiUnits === undefined && info.ledger === undefined) return 0;
    const values: unknown[] = [pgArray(ids), info.outcome, nowParam(this.clock)];
    const steps = [
      `r AS (DELETE FROM outbox_raw WHERE id = ANY (ARRAY(SELECT id FROM u)))`,
      `c AS (${countChanged(2)})`,
      `s AS (DELETE FROM outbox_claims WHERE ids <@ $1::bigint[])`,
    ];
    const ai = info.aiUnits;
    if (ai !== undefined && checkAiUnits(ai.units) > 0) {
      const [counter, daily] = aiUnitSteps(values.length + 1, 3);
      steps.push(`ai AS (${counter})`, `day AS (${daily})`);
      values.push(ai.route, ai.units);
    }
    const ledger = ledgerUpsert(info.ledger ?? [], values.length + 1);
    if (ledger !== undefined) {
      steps.push(`l AS (${ledger.sql})`);
      values.push(...ledger.values);
    }
    const text = `WITH u AS (
        UPDATE outbox SET status = 'delivered', outcome = $2, finished_at = ${pgNow(3)},
          lease_owner = NULL, lease_expires_at = NULL
        WHERE status = 'queued' AND id = ANY($1::bigint[]) RETURNING id, route),
      ${steps.join(',\n      ')}
      SELECT COUNT(*) AS n FROM u`;
    const { rows } = await retryRolledBack(() => this.pool.query<{ n: string }>(text, values));
    return toId(rows[0]?.n ?? 0);
  }

  async knownKeys(route: string, keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const { rows } = await this.pool.query<{ key: string }>('SELECT key FROM outbox WHERE route = $1 AND key = ANY($2::text[])', [
      route,
      pgArray(keys),
    ]);
    return new Set(rows.map((r) => r.key));
  }

  async renewClaims(ids: number[], owner: string, leaseMs: number): Promise<number> {
    if (ids.length === 0) return 0;
    const { rows } = await this.pool.query<{ n: string }>(
      `WITH u AS (
         UPDATE outbox SET lease_expires_at = ${pgNow(4)} + $3 * interval '1 millisecond'
         WHERE status = 'queued' AND lease_owner = $2 AND id = ANY($1::bigint[]) RETURNING id),
       reg AS (${registerClaims(4)})
       SELECT COUNT(*) AS n FROM u`,
      [pgArray(ids), owner, checkDelay('leaseMs', leaseMs, 1), nowParam(this.clock)],
    );
    return toId(rows[0]?.n ?? 0);
  }

  async scheduleRetry(ids: number | number[], delayMs: number, reason: ItemError): Promise<number> {
    const list = Array.isArray(ids) ? ids : [ids];
    const { rows } = await this.pool.query<{ n: string }>(
      `WITH u AS (
         UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ${pgNow(4)} + $2 * interval '1 millisecond',
           last_error = $3::json, lease_owner = NULL, lease_expires_at = NULL
         WHERE status = 'queued' AND id = ANY($1::bigint[]) RETURNING id, route),
       a AS (${attemptInsert({ outcome: `'retry'`, code: '$5', message: '$6', delay: '$2', now: 4 })})
       SELECT COUNT(*) AS n FROM u`,
      [pgArray(list), checkDelay('delayMs', delayMs, 0), JSON.stringify(reason), nowParam(this.clock), reason.code, reason.message],
    );
    return toId(rows[0]?.n ?? 0);
  }

  deadLetter(id: number, error: ItemError): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ route: string }>(
        `WITH u AS (
           UPDATE outbox SET status = 'dead', finished_at = clock_timestamp(), last_error = $2::json,
             lease_owner = NULL, lease_expires_at = NULL
           WHERE status = 'queued' AND id = $1 RETURNING id, route),
         a AS (${attemptInsert({ outcome: `'dead'`, code: '$3', message: '$4', delay: 'NULL', now: 5 })})
         SELECT route FROM u`,
        [id, JSON.stringify(error), error.code, error.message, nowParam(this.clock)],
      );
      await bumpCounters(client, { dead_lettered: countByRoute(rows.map((r) => r.route)) });
      return rows.length === 1;
    });
  }

  pruneDelivered(olderThan: Date): Promise<number> {
    return deleteItems(this.pool, `status = 'delivered' AND NOT action_due AND finished_at < $1`, [olderThan]);
  }

  async pendingActions(limit: number, afterId = 0): Promise<PendingAction[]> {
    const { rows } = await this.pool.query<{ id: string; route: string; key: string; origin: unknown }>(
      `SELECT id, route, key, origin FROM outbox WHERE status = 'delivered' AND action_due AND id > $1 ORDER BY id LIMIT $2`,
      [afterId, checkLimit(limit)],
    );
    return rows.map((r) => ({ id: toId(r.id), route: r.route, origin: storedOrigin(r.origin, r.key) }));
  }

  async finishActions(ids: number[]): Promise<number> {
    if (ids.length === 0) return 0;
    const res = await this.pool.query(`UPDATE outbox SET action_due = false WHERE action_due AND id = ANY($1::bigint[])`, [ids]);
    return res.rowCount ?? 0;
  }

  async outboxDepth(route?: string): Promise<number> {
    const { rows } =
      route === undefined
        ? await this.pool.query<{ n: string }>(`SELECT COUNT(*) AS n FROM outbox WHERE status = 'queued'`)
        : await this.pool.query<{ n: string }>(`SELECT COUNT(*) AS n FROM outbox WHERE status = 'queued' AND route = $1`, [route]);
    return toId(rows[0]?.n ?? 0);
  }

  async outboxCounts(): Promise<OutboxCount[]> {
    const { rows } = await this.pool.query<{ route: string; status: OutboxStatus; n: string }>(
      'SELECT route, status, COUNT(*) AS n FROM outbox GROUP BY route, status ORDER BY route, status',
    );
    return rows.map((r) => ({ route: r.route, status: r.status, count: toId(r.n) }));
  }
}
