/**
 * SQLite push intake: enqueue answering each input's item id, idempotent on the outbox key
 * and on aliases (`outbox_aliases`, a provider's event id pointing to an item), and the
 * narrow state of an item. better-sqlite3 runs the whole batch in one IMMEDIATE transaction,
 * so a duplicate is found before anything is written for it.
 */
import type Database from 'better-sqlite3';
import { itemStateOf, parseItemError, type ItemStateRow } from '../common.js';
import type { Backend } from '../compose.js';
import { searchFields, type SearchFields } from '../console.js';
import type { ItemState, KeyedOutcome, KeyedStore, OutboxInput } from '../types.js';
import type { SqliteOutbox } from './outbox.js';
import { insertSql, inputValues } from './rows.js';

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
  private readonly tx: (items: OutboxInput[]) => KeyedOutcome[];

  constructor(
    db: Database.Database,
    private readonly outbox: SqliteOutbox,
    private readonly now: () => number,
  ) {
    this.insert = db.prepare(insertSql('RETURNING id'));
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
    const tx = db.transaction((items: OutboxInput[], fields: SearchFields[]) => this.enqueueNow(items, fields));
    this.tx = (items) => tx.immediate(items, items.map(searchFields));
  }

  enqueueKeyed(items: OutboxInput[]): KeyedOutcome[] {
    return items.length === 0 ? [] : this.tx(items);
  }

  private enqueueNow(items: OutboxInput[], fields: SearchFields[]): KeyedOutcome[] {
    const now = this.now();
    const fresh: OutboxInput[] = [];
    const out = items.map((item, i): KeyedOutcome => {
      const found = this.find(item);
      if (found !== undefined) {
        this.alias(item, found.id);
        return { ...found, duplicate: true };
      }
      const { id } = this.insert.get(...inputValues(item, now)) as { id: number };
      this.outbox.putBody(id, item, fields[i]!);
      this.alias(item, id);
      fresh.push(item);
      return { id, key: item.key, status: item.error === undefined ? 'queued' : 'dead', duplicate: false };
    });
    this.outbox.parts.threads.indexItems(fresh);
    const routesOf = (dead: boolean): string[] => fresh.filter((i) => (i.error !== undefined) === dead).map((i) => i.route);
    this.outbox.parts.counters.bumpEach(routesOf(false), 'enqueued');
    this.outbox.parts.counters.bumpEach(routesOf(true), 'dead_lettered');
    return out;
  }

  /** The item an alias of the input names (the provider's id first), else the one holding its key. */
  private find(item: OutboxInput): Found | undefined {
    for (const alias of item.aliases ?? []) {
      const row = this.byAlias.get(item.route, alias) as Found | undefined;
      if (row !== undefined) return row;
    }
    return this.byKey.get(item.route, item.key) as Found | undefined;
  }

  private alias(item: OutboxInput, id: number): void {
    for (const alias of item.aliases ?? []) this.addAlias.run(item.route, alias, id);
  }

  findKeys(route: string, keys: string[]): Map<string, number> {
    if (keys.length === 0) return new Map();
    const rows = this.known.all({ route, keys: JSON.stringify(keys) }) as Array<{ key: string; id: number }>;
    return new Map(rows.map((r) => [r.key, r.id]));
  }

  itemState(id: number): ItemState | undefined {
    if (!Number.isSafeInteger(id)) return undefined;
    const r = this.state.get(id) as StateRow | undefined;
    if (r === undefined) return undefined;
    return itemStateOf({ ...r, error: parseItemError(r.last_error) });
  }
}
