/**
 * PostgreSQL intake: the one enqueue (pull and push), answering each input's item id,
 * idempotent on the outbox key and on aliases (`outbox_aliases`, a provider's event id
 * pointing to an item), with the checkpoint under the optional fence; and the narrow state of
 * an item.
 *
 * A batch without aliases (pulled messages, pushed ones without a sender id) goes in
 * multi-row INSERTs (one per ROWS_PER_INSERT items) in input order, each statement carrying its
 * items' search rows and counters too: up to that many items without a fence are one statement,
 * one round trip and its own transaction. With aliases, each input is one
 * INSERT of its row, side rows and aliases that does nothing on a key conflict (waiting for a
 * concurrent writer of that key to finish first); an alias taken meanwhile by another item
 * undoes the row again inside the transaction. Either way the input then answers the item
 * that holds the key or alias. Inputs go in key order so that two writers take their locks alike.
 */
import type pg from 'pg';
import { countByRoute, itemStateOf, threadsBySource } from '../common.js';
import type { Checkpoint } from '../../model/origin.js';
import type {
  EnqueueResult,
  Fence,
  ItemError,
  ItemState,
  KeyedOutcome,
  KeyedStore,
  MessageKeys,
  OutboxInput,
  OutboxStatus,
} from '../types.js';
import type { Backend } from '../compose.js';
import { searchFields, withSearchFields } from '../console.js';
import { putSearch } from './console.js';
import { bumpCounters } from './counters.js';
import { nowParam, pgArray, pgNow, pgText, retryRolledBack, toId, withTransaction, type PgClock, type Queryable } from './db.js';
import { deleteItems } from './outbox.js';
import { putCheckpoint } from './checkpoints.js';
import { ASYNC_COMMIT } from './controls.js';
import type { PgLeases } from './leases.js';
import { insertStatement } from './insert.js';
import { PARAMS_PER_ROW, inputParams } from './rows.js';
import type { PgThreads } from './threads.js';

/** Rows per INSERT statement: PostgreSQL takes at most 65535 parameters. */
const ROWS_PER_INSERT = Math.floor(60_000 / (PARAMS_PER_ROW + 1));

/** An input's route and key as one map key (the route's length first: no two pairs give one string). */
const idOf = (it: { route: string; key: string }): string => `${it.route.length}:${it.route}${it.key}`;

type Found = Omit<KeyedOutcome, 'duplicate'>;

/** The enqueue's answer from each input's outcome. */
function resultOf(items: OutboxInput[], out: KeyedOutcome[]): EnqueueResult {
  let queued = 0;
  let deadLettered = 0;
  items.forEach((it, i) => {
    if (out[i]!.duplicate) return;
    if (it.error === undefined) queued += 1;
    else deadLettered += 1;
  });
  return { queued, deadLettered, duplicates: items.length - queued - deadLettered, items: out };
}

/** The input's row, its document, raw bytes and aliases in one statement; no row on a key conflict. */
function insertOne(it: OutboxInput, aliases: string[], now: Date | null): { text: string; values: unknown[] } {
  const text = `WITH ins AS (
      INSERT INTO outbox (route, key, comment_id, status, finished_at, last_error, origin, warnings, action_due, next_attempt_at)
      VALUES ($1, $2, $3, CASE WHEN $4::json IS NULL THEN 'queued' ELSE 'dead' END, CASE WHEN $4::json IS NOT NULL THEN clock_timestamp() END,
        $4::json, $5::json, $6::json, $10, ${pgNow(14)})
      ON CONFLICT (route, key) DO NOTHING RETURNING id),
    docs AS (
      INSERT INTO outbox_docs (id, document, preview, text_hash, doc_hash) SELECT id, $7::json, $8::json, $11, $12 FROM ins),
    raws AS (
      INSERT INTO outbox_raw (id, raw) SELECT id, $9::bytea FROM ins WHERE $9::bytea IS NOT NULL),
    al AS (
      INSERT INTO outbox_aliases (route, key, item_id) SELECT $1, a, ins.id FROM ins, unnest($13::text[]) AS a
      ON CONFLICT DO NOTHING RETURNING key)
    SELECT (SELECT id FROM ins) AS id, (SELECT COUNT(*) FROM al) AS aliased`;
  const values = [pgText(it.route), ...inputParams(it), aliases, now];
  return { text, values };
}

interface StateRow {
  id: string;
  route: string;
  key: string;
  comment_id: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: Date;
  enqueued_at: Date;
  finished_at: Date | null;
  outcome: string | null;
  last_error: ItemError | null;
}

export class PgKeyed implements Backend<KeyedStore> {
  constructor(
    private readonly pool: pg.Pool,
    private readonly threads: PgThreads,
    private readonly clock: PgClock,
    private readonly leases: PgLeases,
  ) {}

  enqueue(items: OutboxInput[], checkpoint?: Checkpoint, fence?: Fence): Promise<EnqueueResult> {
    if (items.length === 0 && checkpoint === undefined && fence === undefined) {
      return Promise.resolve({ queued: 0, deadLettered: 0, duplicates: 0, items: [] });
    }
    return withSearchFields(items, () => this.enqueueNow(items, checkpoint, fence));
  }

  private enqueueNow(items: OutboxInput[], checkpoint?: Checkpoint, fence?: Fence): Promise<EnqueueResult> {
    const now = nowParam(this.clock);
    if (items.length > 0 && items.every((it) => (it.aliases ?? []).length === 0)) return this.many(items, now, checkpoint, fence);
    const order = items
      .map((_, i) => i)
      .sort((a, b) => {
        const x = items[a]!;
        const y = items[b]!;
        return x.route < y.route ? -1 : x.route > y.route ? 1 : x.key < y.key ? -1 : x.key > y.key ? 1 : a - b;
      });
    const fields = items.map(searchFields);
    return withTransaction(this.pool, async (client) => {
      await this.leases.check(client, fence);
      const out: KeyedOutcome[] = new Array<KeyedOutcome>(items.length);
      for (const i of order) out[i] = await this.one(client, items[i]!, now);
      const fresh = items.filter((_, i) => !out[i]!.duplicate);
      const queued = fresh.filter((i) => i.error === undefined).map((i) => i.route);
      const dead = fresh.filter((i) => i.error !== undefined).map((i) => i.route);
      await bumpCounters(client, { enqueued: countByRoute(queued), dead_lettered: countByRoute(dead) });
      // Duplicates too: the index entry of a message read again is written again (idempotent).
      await this.threads.indexItems(client, items);
      await putSearch(
        client,
        fields.filter((_, i) => !out[i]!.duplicate),
        false,
      );
      if (checkpoint !== undefined) await putCheckpoint(client, checkpoint.key, checkpoint.value);
      return resultOf(items, out);
    });
  }

  /**
   * Inputs without aliases: multi-row INSERTs in input order, each carrying the search rows,
   * counters, and (the last) the thread index entries and the checkpoint; one statement (its own
   * transaction, one round trip) when the items fit in one and no fence is to be checked. An
   * input whose key is held (stored before, or earlier in the batch) answers that item.
   */
  private many(items: OutboxInput[], now: Date | null, checkpoint?: Checkpoint, fence?: Fence): Promise<EnqueueResult> {
    const first = new Map<string, OutboxInput>();
    for (const it of items) {
      const id = idOf(it);
      if (!first.has(id)) first.set(id, it);
    }
    const unique = [...first.values()];
    const chunks: OutboxInput[][] = [];
    for (let i = 0; i < unique.length; i += ROWS_PER_INSERT) chunks.push(unique.slice(i, i + ROWS_PER_INSERT));
    // Duplicates too: the index entry of a message read again is written again (idempotent).
    const threads = threadsBySource(items);
    const write = async (db: Queryable): Promise<EnqueueResult> => {
      // By input: each statement answers the position (`ord`) of each row it inserted in its chunk.
      const stored = new Map<OutboxInput, Found>();
      for (const [i, chunk] of chunks.entries()) {
        const last = i === chunks.length - 1;
        const st = insertStatement(chunk, now, {
          search: chunk.map(searchFields),
          count: true,
          ...(last ? { threads, ...(checkpoint === undefined ? {} : { checkpoint }) } : {}),
        });
        const { rows } = await db.query<{ id: string; ord: number; status: OutboxStatus }>(st);
        for (const r of rows) {
          const it = chunk[r.ord]!;
          stored.set(it, { id: toId(r.id), key: pgText(it.key), status: r.status });
        }
      }
      const held = await this.held(
        db,
        unique.filter((it) => !stored.has(it)),
      );
      const out = items.map((it) => {
        const firstOf = first.get(idOf(it))!;
        const s = stored.get(firstOf);
        if (s !== undefined) return { ...s, duplicate: firstOf !== it };
        const h = held.get(idOf({ route: it.route, key: pgText(it.key) }));
        if (h === undefined) throw new Error(`outbox key ${it.key} of route ${it.route} conflicts but names no item`);
        return { ...h, duplicate: true };
      });
      return resultOf(items, out);
    };
    if (chunks.length === 1 && fence === undefined) return retryRolledBack(() => write(this.pool));
    return withTransaction(this.pool, async (client) => {
      await this.leases.check(client, fence);
      return write(client);
    });
  }

  /** The items holding the keys of these inputs (stored before, or by a concurrent writer), by route and key. */
  private async held(db: Queryable, missing: OutboxInput[]): Promise<Map<string, Found>> {
    const held = new Map<string, Found>();
    for (const route of new Set(missing.map((it) => it.route))) {
      const keys = missing.filter((it) => it.route === route).map((it) => pgText(it.key));
      const { rows } = await db.query<{ id: string; key: string; status: OutboxStatus }>(
        'SELECT id, key, status FROM outbox WHERE route = $1 AND key = ANY($2::text[])',
        [pgText(route), pgArray(keys)],
      );
      for (const r of rows) held.set(idOf({ route, key: r.key }), { id: toId(r.id), key: r.key, status: r.status });
    }
    return held;
  }

  private async one(client: pg.PoolClient, item: OutboxInput, now: Date | null): Promise<KeyedOutcome> {
    const aliases = [...new Set((item.aliases ?? []).map(pgText))];
    const st = insertOne(item, aliases, now);
    const { rows } = await client.query<{ id: string | null; aliased: string }>(st.text, st.values);
    const id = rows[0]?.id ?? null;
    if (id !== null && Number(rows[0]?.aliased) === aliases.length) {
      return { id: toId(id), key: item.key, status: item.error === undefined ? 'queued' : 'dead', duplicate: false };
    }
    // Another item holds one of the aliases: this row was never visible to anyone, drop it.
    if (id !== null) await deleteItems(client, 'id = $1', [id]);
    const found = await this.find(client, item.route, pgText(item.key), aliases);
    if (found === undefined) throw new Error(`outbox key ${item.key} of route ${item.route} conflicts but names no item`);
    await this.alias(client, item.route, aliases, found.id);
    return { ...found, duplicate: true };
  }

  /** The item an alias names (the provider's id first), else the one holding the key. */
  private async find(db: Queryable, route: string, key: string, aliases: string[]): Promise<Found | undefined> {
    const { rows } = await db.query<{ id: string; key: string; status: OutboxStatus }>(
      `SELECT id, key, status FROM (
         SELECT o.id, o.key, o.status, 0 AS p FROM outbox_aliases a JOIN outbox o ON o.id = a.item_id
         WHERE a.route = $1 AND a.key = ANY($3::text[])
         UNION ALL SELECT id, key, status, 1 FROM outbox WHERE route = $1 AND key = $2) f
       ORDER BY p LIMIT 1`,
      [pgText(route), key, aliases],
    );
    const r = rows[0];
    return r === undefined ? undefined : { id: toId(r.id), key: r.key, status: r.status };
  }

  private async alias(db: Queryable, route: string, aliases: string[], id: number): Promise<void> {
    if (aliases.length === 0) return;
    await db.query(
      `INSERT INTO outbox_aliases (route, key, item_id) SELECT $1, a, $3 FROM unnest($2::text[]) AS a ON CONFLICT DO NOTHING`,
      [pgText(route), aliases, id],
    );
  }

  async findKeys(route: string, keys: string[]): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const { rows } = await this.pool.query<{ key: string; id: string }>(
      `SELECT key, id FROM outbox WHERE route = $1 AND key = ANY($2::text[])
       UNION ALL SELECT key, item_id AS id FROM outbox_aliases WHERE route = $1 AND key = ANY($2::text[])`,
      [route, pgArray(keys)],
    );
    return new Map(rows.map((r) => [r.key, toId(r.id)]));
  }

  /**
   * One statement: the keys and aliases held, and the first attempt of each message holding
   * neither counted (committed without waiting for the WAL flush, as every attempt count is).
   * The messages go in key order, so that two writers take their locks alike.
   */
  async findKeysAndBegin(route: string, messages: readonly MessageKeys[]): Promise<{ found: Map<string, number>; begun: Set<string> }> {
    if (messages.length === 0) return { found: new Map(), begun: new Set() };
    const sorted = [...messages].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const keys = sorted.flatMap((m) => (m.alias === undefined ? [m.key] : [m.key, m.alias]));
    const { rows } = await this.pool.query<{ key: string; id: string | null }>(
      `${ASYNC_COMMIT},
       f AS (SELECT key, id FROM outbox WHERE route = $1 AND key = ANY($2::text[])
         UNION ALL SELECT key, item_id AS id FROM outbox_aliases WHERE route = $1 AND key = ANY($2::text[])),
       ins AS (INSERT INTO parse_attempts (route, key, attempts, updated_at)
         SELECT DISTINCT ON (m.k) $1, m.k, 1, ${pgNow(5)} FROM unnest($3::text[], $4::text[]) AS m (k, a), light
         WHERE m.k NOT IN (SELECT key FROM f) AND (m.a IS NULL OR m.a NOT IN (SELECT key FROM f)) ORDER BY m.k
         ON CONFLICT (route, key) DO NOTHING RETURNING key)
       SELECT key, id FROM f UNION ALL SELECT key, NULL FROM ins`,
      [route, pgArray(keys), pgArray(sorted.map((m) => m.key)), pgArray(sorted.map((m) => m.alias)), nowParam(this.clock)],
    );
    const found = new Map<string, number>();
    const begun = new Set<string>();
    for (const r of rows) {
      if (r.id === null) begun.add(r.key);
      else found.set(r.key, toId(r.id));
    }
    return { found, begun };
  }

  async itemState(id: number): Promise<ItemState | undefined> {
    if (!Number.isSafeInteger(id)) return undefined;
    const { rows } = await this.pool.query<StateRow>(
      `SELECT id, route, key, comment_id, status, attempts, next_attempt_at, enqueued_at, finished_at, outcome, last_error
       FROM outbox WHERE id = $1`,
      [id],
    );
    const r = rows[0];
    if (r === undefined) return undefined;
    return itemStateOf({ ...r, id: toId(r.id), error: r.last_error ?? undefined });
  }
}
