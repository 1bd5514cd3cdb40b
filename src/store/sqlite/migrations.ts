/**
 * Versioned SQLite schema. Each migration runs once, in its own IMMEDIATE transaction, and
 * is recorded in `schema_migrations`. A database whose schema is newer than the newest
 * migration here is refused (an older mailgate must not write to it).
 */
import type Database from 'better-sqlite3';
import {
  attemptsTableSql,
  checkNotNewer,
  CONSOLE_INDEXES_SQL,
  latestVersion,
  migrationFailed,
  schemaTextFailed,
  takesSchemaText,
  type Migration,
  type SchemaText,
} from '../migrate.js';
import { FRESH_SCHEMA_SQL, FRESH_SCHEMA_VERSION } from './fresh-schema.js';

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
      CREATE TABLE outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        route TEXT NOT NULL,
        key TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'delivered', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        lease_owner TEXT,
        lease_expires_at INTEGER,
        enqueued_at INTEGER NOT NULL,
        finished_at INTEGER,
        outcome TEXT,
        last_error TEXT,
        origin TEXT NOT NULL,
        warnings TEXT,
        document TEXT NOT NULL,
        preview TEXT,
        raw BLOB
      );
      CREATE UNIQUE INDEX outbox_route_key ON outbox (route, key);
      CREATE INDEX outbox_ready_route ON outbox (route, id) WHERE status = 'queued';
      CREATE INDEX outbox_ready ON outbox (id) WHERE status = 'queued';
      CREATE INDEX outbox_dead ON outbox (id) WHERE status = 'dead';
      CREATE INDEX outbox_dead_route ON outbox (route, id) WHERE status = 'dead';
      CREATE INDEX outbox_delivered ON outbox (finished_at) WHERE status = 'delivered';

      CREATE TABLE checkpoints (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );

      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      );

      CREATE TABLE ledger (
        source TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        props_hash TEXT NOT NULL,
        outcome TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (source, comment_id)
      ) WITHOUT ROWID;

      CREATE TABLE threads (
        source TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        ts_ms INTEGER NOT NULL,
        timestamp TEXT NOT NULL,
        from_addr TEXT,
        participants TEXT NOT NULL,
        PRIMARY KEY (source, comment_id)
      ) WITHOUT ROWID;
      CREATE INDEX threads_by_thread ON threads (source, thread_id, ts_ms);

      CREATE TABLE predictions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        route TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        key TEXT NOT NULL,
        predictions TEXT NOT NULL,
        model TEXT,
        created_at INTEGER NOT NULL,
        UNIQUE (route, comment_id)
      );

      CREATE TABLE route_counters (
        route TEXT PRIMARY KEY,
        enqueued INTEGER NOT NULL DEFAULT 0,
        delivered INTEGER NOT NULL DEFAULT 0,
        unchanged INTEGER NOT NULL DEFAULT 0,
        dead_lettered INTEGER NOT NULL DEFAULT 0,
        ai_units INTEGER NOT NULL DEFAULT 0
      );
    `,
  },
  {
    version: 2,
    name: 'after-delivery actions',
    sql: `
      ALTER TABLE outbox ADD COLUMN action_due INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX outbox_actions ON outbox (id) WHERE status = 'delivered' AND action_due = 1;
    `,
  },
  {
    // Claims, outcomes and retries rewrite only a narrow row; the wide values live in side
    // tables keyed by outbox id: the document and preview until the item is pruned or
    // purged, the raw bytes until it is delivered (deleting the side row drops them).
    version: 3,
    name: 'wide columns in side tables',
    sql: `
      CREATE TABLE outbox_docs (
        id INTEGER PRIMARY KEY,
        document TEXT NOT NULL,
        preview TEXT
      );
      CREATE TABLE outbox_raw (
        id INTEGER PRIMARY KEY,
        raw BLOB NOT NULL
      );
      INSERT INTO outbox_docs (id, document, preview) SELECT id, document, preview FROM outbox;
      INSERT INTO outbox_raw (id, raw) SELECT id, raw FROM outbox WHERE raw IS NOT NULL;
      ALTER TABLE outbox DROP COLUMN document;
      ALTER TABLE outbox DROP COLUMN preview;
      ALTER TABLE outbox DROP COLUMN raw;
    `,
  },
  {
    // The ledger's second hash covers the whole document, the first the comment's text
    // (src/ledger/); entries written before keep a marked text hash so they are
    // never mistaken for the new kind. Intake stores both hashes with the document.
    version: 4,
    name: 'ledger document hash, hashes stored with the document',
    sql: `
      ALTER TABLE ledger RENAME COLUMN props_hash TO doc_hash;
      UPDATE ledger SET text_hash = 'v1:' || text_hash;
      ALTER TABLE outbox_docs ADD COLUMN text_hash TEXT;
      ALTER TABLE outbox_docs ADD COLUMN doc_hash TEXT;
    `,
  },
  {
    // Push intake: a pushed message is keyed by the SHA-256 of its bytes; the provider's event
    // id is a second key naming the same item, so a retry that re-encodes the message is still
    // the same item. An alias lives as long as its item (pruning or purging it forgets both).
    version: 5,
    name: 'outbox key aliases',
    sql: `
      CREATE TABLE outbox_aliases (
        route TEXT NOT NULL,
        key TEXT NOT NULL,
        item_id INTEGER NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
        PRIMARY KEY (route, key)
      ) WITHOUT ROWID;
      CREATE INDEX outbox_aliases_item ON outbox_aliases (item_id);
    `,
  },
  {
    // Every process that claims work registers with its identity and a heartbeat, so the
    // claims of a dead one are taken back at once (same host, pid gone) or after a few missed
    // heartbeats, not after a full lease. The index finds a dead owner's claims.
    version: 6,
    name: 'owners',
    sql: `
      CREATE TABLE owners (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        proc_start TEXT,
        heartbeat_ms INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      );
      CREATE INDEX outbox_claimed ON outbox (lease_owner) WHERE status = 'queued' AND lease_owner IS NOT NULL;
    `,
  },
  {
    version: 7,
    name: 'lease fencing tokens',
    // A lease row now outlives its release (expires_at 0) so that its token only grows.
    sql: `
      ALTER TABLE leases ADD COLUMN token INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE owners ADD COLUMN lease_group TEXT;
    `,
  },
  {
    // The console: per item the fields its list shows and searches (lower-cased copies for
    // prefix search, each indexed), its delivery attempts, and AI units per day. Items stored
    // before get a search row without sender and subject. Both side tables die with their item.
    // The partial index counts unchanged items without reading every delivered one. Number 7
    // belongs to lease fencing.
    version: 8,
    name: 'console: item search fields, delivery attempts, AI units per day',
    sql: `
      CREATE TABLE outbox_search (
        id INTEGER PRIMARY KEY REFERENCES outbox (id) ON DELETE CASCADE,
        route TEXT NOT NULL,
        adapter TEXT NOT NULL,
        account TEXT,
        sender TEXT,
        sender_name TEXT,
        subject TEXT,
        message_id TEXT,
        msg_ts INTEGER,
        s_sender TEXT,
        s_name TEXT,
        s_subject TEXT,
        s_message_id TEXT,
        s_comment_id TEXT NOT NULL
      );
${CONSOLE_INDEXES_SQL}
      INSERT INTO outbox_search (id, route, adapter, account, s_comment_id)
        SELECT id, route, COALESCE(json_extract(origin, '$.adapter'), 'unknown'), json_extract(origin, '$.account'), lower(comment_id)
        FROM outbox;

${attemptsTableSql('INTEGER', 'INTEGER')}

      CREATE TABLE ai_units_daily (
        route TEXT NOT NULL,
        day TEXT NOT NULL,
        units INTEGER NOT NULL,
        PRIMARY KEY (route, day)
      ) WITHOUT ROWID;
    `,
  },
  {
    // Controls: route pauses (were `route-pause:<route>` checkpoints, moved here), mailbox
    // states and per-folder sync states.
    version: 9,
    name: 'controls: route pauses, mailbox states, folder sync states, parse attempts',
    sql: `
      CREATE TABLE route_pauses (
        route TEXT PRIMARY KEY,
        target TEXT NOT NULL,
        code TEXT NOT NULL,
        message TEXT NOT NULL,
        since TEXT NOT NULL,
        until TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );

      CREATE TABLE mailbox_states (
        mailbox TEXT PRIMARY KEY,
        enabled INTEGER NOT NULL,
        reason TEXT CHECK (reason IN ('user', 'quota', 'sync_error')),
        error_kind TEXT,
        error_code TEXT,
        error_message TEXT,
        by_command INTEGER NOT NULL,
        failing_since TEXT,
        updated_at TEXT NOT NULL
      );

      CREATE TABLE parse_attempts (
        route TEXT NOT NULL,
        key TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (route, key)
      );

      CREATE TABLE folder_states (
        mailbox TEXT NOT NULL,
        folder TEXT NOT NULL,
        state TEXT CHECK (state IN ('in_progress', 'up_to_date')),
        synced_until TEXT,
        last_synced TEXT,
        behind BIGINT,
        filtered BIGINT NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (mailbox, folder)
      );

      INSERT INTO route_pauses (route, target, code, message, since, until, updated_at)
        SELECT substr(key, 13), json_extract(value, '$.target'), json_extract(value, '$.code'), COALESCE(json_extract(value, '$.message'), ''),
               json_extract(value, '$.since'), json_extract(value, '$.until'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
        FROM checkpoints WHERE key LIKE 'route-pause:%' AND json_extract(value, '$.paused') = 1
          AND json_extract(value, '$.target') IS NOT NULL AND json_extract(value, '$.code') IS NOT NULL
          AND json_extract(value, '$.since') IS NOT NULL AND json_extract(value, '$.until') IS NOT NULL;
      DELETE FROM checkpoints WHERE key LIKE 'route-pause:%';
    `,
  },
  {
    // Parse attempts are written and deleted for every message a pull call reads: as a table
    // keyed by (route, key) alone (WITHOUT ROWID) each write changes one b-tree, not a row table
    // and its key index.
    version: 10,
    name: 'parse attempts in one b-tree',
    sql: `
      CREATE TABLE parse_attempts_keyed (
        route TEXT NOT NULL,
        key TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (route, key)
      ) WITHOUT ROWID;
      INSERT INTO parse_attempts_keyed (route, key, attempts, updated_at) SELECT route, key, attempts, updated_at FROM parse_attempts;
      DROP TABLE parse_attempts;
      ALTER TABLE parse_attempts_keyed RENAME TO parse_attempts;
    `,
  },
  {
    // An enqueue writes an item's search row here, at the end of a table with no other index;
    // the console's reads, the thread index's pruning and retention rounds move these rows into
    // outbox_search (./console.ts, `foldSearches`), whose nine indexes, five of them keyed by
    // lower-cased text in no order, cost an enqueue more than its outbox row did.
    version: 11,
    name: 'search rows written at enqueue, indexed later',
    sql: `
      CREATE TABLE outbox_search_new (
        id INTEGER PRIMARY KEY REFERENCES outbox (id) ON DELETE CASCADE,
        route TEXT NOT NULL,
        adapter TEXT NOT NULL,
        account TEXT,
        sender TEXT,
        sender_name TEXT,
        subject TEXT,
        message_id TEXT,
        msg_ts INTEGER,
        s_sender TEXT,
        s_name TEXT,
        s_subject TEXT,
        s_message_id TEXT,
        s_comment_id TEXT NOT NULL
      );
    `,
  },
  {
    // An enqueue writes its thread index entries here, at the end of a table with no other
    // index; the thread index's reads and pruning and retention rounds move them into threads
    // (./threads.ts, `foldThreads`), whose two b-trees, keyed by comment id and thread id in no
    // order, each took a page at a random place per message.
    version: 12,
    name: 'thread index entries written at enqueue, indexed later',
    sql: `
      CREATE TABLE threads_new (
        seq INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        ts_ms INTEGER NOT NULL,
        timestamp TEXT NOT NULL,
        from_addr TEXT,
        participants TEXT NOT NULL
      );
    `,
  },
];

export const SQLITE_SCHEMA_VERSION = Math.max(...SQLITE_MIGRATIONS.map((m) => m.version));

/** The schema a new store gets in one step (./fresh-schema.ts). */
const SCHEMA_TEXT: SchemaText = { own: SQLITE_MIGRATIONS, version: FRESH_SCHEMA_VERSION };

function currentVersion(db: Database.Database): number {
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}

/**
 * A database with no tables yet gets the newest schema in one transaction (./fresh-schema.ts),
 * recorded as every migration applied. False, and nothing written, when it has tables by the
 * time the write lock is held (another process created them meanwhile): the migrations then
 * run as for any store.
 */
function createFresh(db: Database.Database): boolean {
  const create = db.transaction(() => {
    const tables = db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name <> 'schema_migrations'").get() as { n: number };
    if (tables.n > 0 || currentVersion(db) > 0) return false;
    db.exec(FRESH_SCHEMA_SQL);
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    const now = Date.now();
    for (const m of SQLITE_MIGRATIONS) record.run(m.version, m.name, now);
    return true;
  });
  try {
    return create.immediate();
  } catch (err) {
    throw schemaTextFailed(SCHEMA_TEXT, err);
  }
}

/** Applies what is missing; returns the schema version. */
export function migrateSqlite(db: Database.Database, migrations: readonly Migration[] = SQLITE_MIGRATIONS): number {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const latest = latestVersion(migrations);
  const step = db.transaction((m: Migration) => {
    // Re-read inside the write lock: another process may have applied it meanwhile.
    if (currentVersion(db) >= m.version) return;
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
  });
  const found = currentVersion(db);
  checkNotNewer(found, latest);
  if (found >= latest) return found;
  // A store behind the newest migration (a fresh one runs them all): their commits are not synced
  // one by one (a dozen syncs on the thread that opens the store). A power cut may then take back the last of them, which
  // run again at the next open; the store's first synced commit syncs them all before anything
  // that needs them is acknowledged (one WAL, in order).
  const synchronous = db.pragma('synchronous', { simple: true }) as number;
  db.pragma('synchronous = NORMAL');
  try {
    if (takesSchemaText(SCHEMA_TEXT, found, migrations) && createFresh(db)) return latest;
    for (const m of migrations) {
      if (m.version <= found) continue;
      try {
        step.immediate(m);
      } catch (err) {
        throw migrationFailed(m, err);
      }
    }
  } finally {
    db.pragma(`synchronous = ${synchronous}`);
  }
  return currentVersion(db);
}
