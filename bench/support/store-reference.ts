/**
 * bench:store's reference: the same items written the plain way, straight through better-sqlite3
 * or pg, to print beside the store's figures. One table, one row an item holding what the store
 * is given (route, key, comment id, document and origin as JSON, the raw bytes), unique on
 * (route, key); a batch is one transaction with the checkpoint upsert; a claim takes the oldest
 * queued rows of the route, a mark sets them delivered. No search row, ledger, thread index,
 * attempts or counters: what the store costs beyond this is the price of those.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Checkpoint } from '../../src/model/origin.js';
import type { OutboxInput } from '../../src/store/types.js';

/** The writes bench:store times, on the store or on a reference. */
export interface BenchWrites {
  enqueue(items: OutboxInput[], checkpoint: Checkpoint): Promise<void>;
  /** Claims up to `limit` queued items of `route`: their ids. */
  claim(route: string, limit: number): Promise<number[]>;
  markDelivered(ids: number[]): Promise<void>;
  close(): Promise<void>;
}

const row = (it: OutboxInput): [string, string, string, string, string, Buffer | null] => [
  it.route,
  it.key,
  it.commentId,
  JSON.stringify(it.document),
  JSON.stringify(it.origin),
  it.raw ?? null,
];

/** better-sqlite3 on a fresh file: WAL, `synchronous` as given (the store's FULL or NORMAL). */
export function sqliteReference(file: string, synchronous: 'FULL' | 'NORMAL'): BenchWrites {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, route TEXT NOT NULL, key TEXT NOT NULL, comment_id TEXT NOT NULL,
             document TEXT NOT NULL, origin TEXT NOT NULL, raw BLOB, status TEXT NOT NULL DEFAULT 'queued', claimed_by TEXT, UNIQUE (route, key));
           CREATE INDEX items_ready ON items (route, status, id);
           CREATE TABLE checkpoints (key TEXT PRIMARY KEY, value TEXT NOT NULL);`);
  const insert = db.prepare('INSERT INTO items (route, key, comment_id, document, origin, raw) VALUES (?, ?, ?, ?, ?, ?)');
  const checkpoint = db.prepare(
    'INSERT INTO checkpoints (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  );
  const claim = db.prepare<[string, string, number], { id: number; document: string }>(
    `UPDATE items SET status = 'claimed', claimed_by = ? WHERE id IN
       (SELECT id FROM items WHERE route = ? AND status = 'queued' ORDER BY id LIMIT ?) RETURNING id, document`,
  );
  const mark = db.prepare("UPDATE items SET status = 'delivered' WHERE id = ?");
  const enqueue = db.transaction((items: OutboxInput[], cp: Checkpoint) => {
    for (const it of items) insert.run(...row(it));
    checkpoint.run(cp.key, JSON.stringify(cp.value));
  });
  const delivered = db.transaction((ids: number[]) => {
    for (const id of ids) mark.run(id);
  });
  return {
    enqueue: async (items, cp) => void enqueue(items, cp),
    // The documents are read as text, as the store hands them to delivery (parsed only when needed).
    claim: async (route, limit) => claim.all('bench', route, limit).map((r) => r.id),
    markDelivered: async (ids) => void delivered(ids),
    close: async () => void db.close(),
  };
}

/** pg on a fresh database: a batch is one multi-row INSERT and the checkpoint upsert in one transaction. */
export async function postgresReference(url: string): Promise<BenchWrites> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query(`CREATE TABLE items (id BIGSERIAL PRIMARY KEY, route TEXT NOT NULL, key TEXT NOT NULL, comment_id TEXT NOT NULL,
                    document JSONB NOT NULL, origin JSONB NOT NULL, raw BYTEA, status TEXT NOT NULL DEFAULT 'queued', claimed_by TEXT, UNIQUE (route, key));
                  CREATE INDEX items_ready ON items (route, status, id);
                  CREATE TABLE checkpoints (key TEXT PRIMARY KEY, value JSONB NOT NULL);`);
  return {
    async enqueue(items, cp) {
      const values = items.map((_, i) => `($${i * 6 + 1}, $${i * 6 + 2}, $${i * 6 + 3}, $${i * 6 + 4}, $${i * 6 + 5}, $${i * 6 + 6})`);
      await db.query('BEGIN');
      await db.query(`INSERT INTO items (route, key, comment_id, document, origin, raw) VALUES ${values.join(', ')}`, items.flatMap(row));
      await db.query('INSERT INTO checkpoints (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [
        cp.key,
        JSON.stringify(cp.value),
      ]);
      await db.query('COMMIT');
    },
    async claim(route, limit) {
      const { rows } = await db.query<{ id: string; document: string }>(
        `UPDATE items SET status = 'claimed', claimed_by = $1 WHERE id IN
           (SELECT id FROM items WHERE route = $2 AND status = 'queued' ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING id, document::text AS document`,
        ['bench', route, limit],
      );
      return rows.map((r) => Number(r.id));
    },
    async markDelivered(ids) {
      await db.query("UPDATE items SET status = 'delivered' WHERE id = ANY($1)", [ids]);
    },
    close: () => db.end(),
  };
}
