/**
 * SQLite intake: the one enqueue (pull and push), answering each input's item id, idempotent
 * on the outbox key and on aliases (`outbox_aliases`, a provider's event id pointing to an
 * item), with the checkpoint under the optional fence; and the narrow state of an item.
 * better-sqlite3 runs the whole batch in one IMMEDIATE transaction, so a duplicate is found
 * before anything is written for it.
 */
import type Database from 'better-sqlite3';
import { itemStateOf, parseItemError, type ItemStateRow } from '../common.js';
import type { Backend } from '../compose.js';
import { searchFields, withSearchFields, type SearchFields } from '../console.js';
import type { Checkpoint } from '../../model/origin.js';
import type { EnqueueResult, Fence, ItemState, KeyedOutcome, KeyedStore, MessageKeys, OutboxInput } from '../types.js';
import type { SqliteControls } from './controls.js';
import type { Body } from './kept-bodies.js';
import type { SqliteOutbox } from './outbox.js';
import { MultiRowInsert } from './multi-row.js';
import { INSERT_COLUMNS, insertSql, inputValues } from './rows.js';
import type { WalSync } from './wal-sync.js';

type Found = Omit<KeyedOutcome, 'duplicate'>;

/** An outbox row as itemState reads it: times in Unix ms, the error as stored. */
type StateRow = Omit<ItemStateRow, 'error'> & { last_error: string | null };

export class SqliteKeyed implements Backend<KeyedStore> {
  private readonly insert: Database.Statement;
  private readonly insertMany: MultiRowInsert;
  private readonly byKey: Database.Statement;
  private readonly byAlias: Database.Statement;
  private readonly addAlias: Database.Statement;
  private readonly known: Database.Statement;
  private readonly state: Database.Statement;
  private readonly tx: (items: OutboxInput[], checkpoint: Checkpoint | undefined, fence: Fence | undefined) => EnqueueResult;

  constructor(
    db: Database.Database,
    private readonly outbox: SqliteOutbox,
    private readonly now: () => number,
    private readonly wal: WalSync,
    private readonly controls: Pick<SqliteControls, 'beginParseAttempts'>,
  ) {
    // No RETURNING: the new id is the statement's own last insert rowid, and a key already stored
    // changes nothing. (RETURNING builds a result table and a row object for every insert: about
    // a third of the statement's CPU.)
    this.insert = db.prepare(insertSql('ON CONFLICT (route, key) DO NOTHING'));
    this.insertMany = new MultiRowInsert(
      db,
      `INSERT INTO outbox (${INSERT_COLUMNS})`,
      'ON CONFLICT (route, key) DO NOTHING',
      INSERT_COLUMNS.split(',').length,
    );
    this.byKey = db.prepare('SELECT id, key, status FROM outbox WHERE route = ? AND key = ?');
    this.byAlias = db.prepare(
      'SELECT o.id, o.key, o.status FROM outbox_aliases a JOIN outbox o ON o.id = a.item_id WHERE a.route = ? AND a.key = ?',
    );
    this.addAlias = db.prepare('INSERT INTO outbox_aliases (route, key, item_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
    this.known = db.prepare(
      `SELECT key, id FROM outbox WHERE route = @route AND key IN (SELECT value FROM json_each(@keys))
       UNION ALL SELECT key, item_id AS id FROM outbox_aliases WHERE route = @route AND key IN (SELECT value FROM json_each(@keys))`,
    );
    this.state = db.prepare(
      `SELECT id, route, key, comment_id, status, attempts, next_attempt_at, enqueued_at, finished_at, outcome, last_error
       FROM outbox WHERE id = ?`,
    );
    const tx = db.transaction(
      (items: OutboxInput[], fields: SearchFields[], checkpoint: Checkpoint | undefined, fence: Fence | undefined) => {
        this.outbox.parts.leases.check(fence);
        this.outbox.kept.check();
        const stored = this.enqueueNow(items, fields);
        if (checkpoint !== undefined) this.outbox.parts.checkpoints.put(checkpoint.key, checkpoint.value);
        return stored;
      },
    );
    this.tx = (items, checkpoint, fence) => {
      const { result, bodies } = tx.immediate(items, items.map(searchFields), checkpoint, fence);
      // Committed: the next claim takes these bodies instead of reading them back.
      for (const { id, body } of bodies) this.outbox.kept.add(id, body);
      return result;
    };
  }

  enqueue(items: OutboxInput[], checkpoint?: Checkpoint, fence?: Fence): EnqueueResult | Promise<EnqueueResult> {
    if (items.length === 0 && checkpoint === undefined && fence === undefined) {
      return { queued: 0, deadLettered: 0, duplicates: 0, items: [] };
    }
    return withSearchFields(items, () => this.wal.durably(() => this.tx(items, checkpoint, fence)));
  }

  /** The enqueue's writes: its result, and the bodies of the new queued items. */
  private enqueueNow(items: OutboxInput[], fields: SearchFields[]): { result: EnqueueResult; bodies: Array<{ id: number; body: Body }> } {
    const now = this.now();
    const fresh: OutboxInput[] = [];
    const bodies: Array<{ id: number; item: OutboxInput }> = [];
    const search: Array<{ id: number; fields: SearchFields }> = [];
    // Without aliases no input depends on an earlier one's alias rows: the outbox rows go in a few
    // statements. An alias may name an item stored earlier in the same batch: then a row at a time.
    const ids = items.some((item) => item.aliases !== undefined && item.aliases.length > 0) ? undefined : this.insertRows(items, now);
    const out = items.map((item, i): KeyedOutcome => {
      const aliased = ids === undefined ? this.byAliases(item) : undefined;
      const id = ids === undefined ? (aliased === undefined ? this.insertRow(item, now)?.id : undefined) : ids[i];
      const row = id === undefined ? undefined : { id };
      if (row === undefined) {
        const found = aliased ?? (this.byKey.get(item.route, item.key) as Found);
        this.alias(item, found.id);
        return { ...found, duplicate: true };
      }
      bodies.push({ id: row.id, item });
      search.push({ id: row.id, fields: fields[i]! });
      this.alias(item, row.id);
      fresh.push(item);
      return { id: row.id, key: item.key, status: item.error === undefined ? 'queued' : 'dead', duplicate: false };
    });
    const kept = this.outbox.putBodies(bodies);
    this.outbox.parts.console.putSearches(search);
    // Duplicates too: the index entry of a message read again is written again (idempotent).
    this.outbox.parts.threads.indexItems(items);
    const queued = fresh.filter((i) => i.error === undefined).map((i) => i.route);
    const dead = fresh.filter((i) => i.error !== undefined).map((i) => i.route);
    this.outbox.parts.counters.bumpEach(queued, 'enqueued');
    this.outbox.parts.counters.bumpEach(dead, 'dead_lettered');
    return {
      result: { queued: queued.length, deadLettered: dead.length, duplicates: items.length - fresh.length, items: out },
      bodies: kept,
    };
  }

  /**
   * Inserts the inputs' outbox rows, up to 64 a statement (a statement per row cost about 1.4× the
   * CPU): each input's new id, or undefined when its key was stored already (before, or by an
   * earlier input of the batch). A statement that inserted all its rows gave them consecutive ids
   * ending at its last insert rowid. One that skipped some reads each row's id by its key: ids
   * only grow (AUTOINCREMENT), so the statement's new rows hold its `changes` highest ids, each
   * inserted by the first of its rows that names it.
   */
  private insertRows(items: OutboxInput[], now: number): Array<number | undefined> {
    const ids: Array<number | undefined> = [];
    this.insertMany.runEach(
      items.map((item) => inputValues(item, now)),
      (at, size, info) => {
        const last = Number(info.lastInsertRowid);
        if (info.changes === size) {
          for (let i = 0; i < size; i++) ids.push(last - size + 1 + i);
          return;
        }
        const found = items.slice(at, at + size).map((item) => (this.byKey.get(item.route, item.key) as Found).id);
        const fresh = new Set([...new Set(found)].sort((a, b) => b - a).slice(0, info.changes));
        for (const id of found) {
          ids.push(fresh.delete(id) ? id : undefined);
        }
      },
    );
    return ids;
  }

  /** Inserts the input's outbox row: its new id, or undefined when its key is stored already. */
  private insertRow(item: OutboxInput, now: number): { id: number } | undefined {
    const info = this.insert.run(...inputValues(item, now));
    return info.changes === 0 ? undefined : { id: Number(info.lastInsertRowid) };
  }

  /** The item an alias of the input names (the provider's id first). */
  private byAliases(item: OutboxInput): Found | undefined {
    for (const alias of item.aliases ?? []) {
      const row = this.byAlias.get(item.route, alias) as Found | undefined;
      if (row !== undefined) return row;
    }
    return undefined;
  }

  private alias(item: OutboxInput, id: number): void {
    for (const alias of item.aliases ?? []) this.addAlias.run(item.route, alias, id);
  }

  findKeys(route: string, keys: string[]): Map<string, number> {
    if (keys.length === 0) return new Map();
    const rows = this.known.all({ route, keys: JSON.stringify(keys) }) as Array<{ key: string; id: number }>;
    return new Map(rows.map((r) => [r.key, r.id]));
  }

  /** `findKeys`, then `beginParseAttempts` for the messages it found nothing of (no round trip to save here). */
  findKeysAndBegin(route: string, messages: readonly MessageKeys[]): { found: Map<string, number>; begun: Set<string> } {
    const found = this.findKeys(
      route,
      messages.flatMap((m) => (m.alias === undefined ? [m.key] : [m.key, m.alias])),
    );
    const fresh = messages.filter((m) => !found.has(m.key) && (m.alias === undefined || !found.has(m.alias))).map((m) => m.key);
    return { found, begun: this.controls.beginParseAttempts(route, fresh) };
  }

  itemState(id: number): ItemState | undefined {
    if (!Number.isSafeInteger(id)) return undefined;
    const r = this.state.get(id) as StateRow | undefined;
    if (r === undefined) return undefined;
    return itemStateOf({ ...r, error: parseItemError(r.last_error) });
  }
}
