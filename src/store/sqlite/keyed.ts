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
import type { SqliteOutbox } from './outbox.js';
import { insertSql, inputValues } from './rows.js';
import type { WalSync } from './wal-sync.js';

type Found = Omit<KeyedOutcome, 'duplicate'>;

/** An outbox row as itemState reads it: times in Unix ms, the error as stored. */
type StateRow = Omit<ItemStateRow, 'error'> & { last_error: string | null };

export class SqliteKeyed implements Backend<KeyedStore> {
  private readonly insert: Database.Statement;
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
        const result = this.enqueueNow(items, fields);
        if (checkpoint !== undefined) this.outbox.parts.checkpoints.put(checkpoint.key, checkpoint.value);
        return result;
      },
    );
    this.tx = (items, checkpoint, fence) => tx.immediate(items, items.map(searchFields), checkpoint, fence);
  }

  enqueue(items: OutboxInput[], checkpoint?: Checkpoint, fence?: Fence): EnqueueResult | Promise<EnqueueResult> {
    if (items.length === 0 && checkpoint === undefined && fence === undefined) {
      return { queued: 0, deadLettered: 0, duplicates: 0, items: [] };
    }
    return withSearchFields(items, () => this.wal.durably(() => this.tx(items, checkpoint, fence)));
  }

  private enqueueNow(items: OutboxInput[], fields: SearchFields[]): EnqueueResult {
    const now = this.now();
    const fresh: OutboxInput[] = [];
    const bodies: Array<{ id: number; item: OutboxInput }> = [];
    const search: Array<{ id: number; fields: SearchFields }> = [];
    const out = items.map((item, i): KeyedOutcome => {
      const aliased = this.byAliases(item);
      const row = aliased === undefined ? this.insertRow(item, now) : undefined;
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
    this.outbox.putBodies(bodies);
    this.outbox.parts.console.putSearches(search);
    // Duplicates too: the index entry of a message read again is written again (idempotent).
    this.outbox.parts.threads.indexItems(items);
    const queued = fresh.filter((i) => i.error === undefined).map((i) => i.route);
    const dead = fresh.filter((i) => i.error !== undefined).map((i) => i.route);
    this.outbox.parts.counters.bumpEach(queued, 'enqueued');
    this.outbox.parts.counters.bumpEach(dead, 'dead_lettered');
    return { queued: queued.length, deadLettered: dead.length, duplicates: items.length - fresh.length, items: out };
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
