/**
 * The schema a new SQLite store is created with, in one transaction: what the migrations
 * (./migrations.ts) leave, statement by statement as `sqlite_master` holds it after them. A new
 * store ran all twelve migrations before, each in its own transaction, with the tables they
 * rebuild and columns they add and drop; this is a third of their CPU. Stores at an earlier
 * version still go through the migrations. test/store/sqlite-fresh-schema.test.ts checks that
 * both ways give the same schema; when a migration is added, it prints the text to put here.
 */

/** The version this schema is: the newest migration's. */
export const FRESH_SCHEMA_VERSION = 12;

export const FRESH_SCHEMA_SQL = `
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
        action_due INTEGER NOT NULL DEFAULT 0);
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
      , token INTEGER NOT NULL DEFAULT 0);
CREATE TABLE ledger (
        source TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        doc_hash TEXT NOT NULL,
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
CREATE INDEX outbox_actions ON outbox (id) WHERE status = 'delivered' AND action_due = 1;
CREATE TABLE outbox_docs (
        id INTEGER PRIMARY KEY,
        document TEXT NOT NULL,
        preview TEXT
      , text_hash TEXT, doc_hash TEXT);
CREATE TABLE outbox_raw (
        id INTEGER PRIMARY KEY,
        raw BLOB NOT NULL
      );
CREATE TABLE outbox_aliases (
        route TEXT NOT NULL,
        key TEXT NOT NULL,
        item_id INTEGER NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
        PRIMARY KEY (route, key)
      ) WITHOUT ROWID;
CREATE INDEX outbox_aliases_item ON outbox_aliases (item_id);
CREATE TABLE owners (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        proc_start TEXT,
        heartbeat_ms INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      , lease_group TEXT);
CREATE INDEX outbox_claimed ON outbox (lease_owner) WHERE status = 'queued' AND lease_owner IS NOT NULL;
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
CREATE INDEX outbox_search_adapter ON outbox_search (adapter, id);
CREATE INDEX outbox_search_account ON outbox_search (adapter, account, id) WHERE account IS NOT NULL;
CREATE INDEX outbox_search_sender ON outbox_search (s_sender) WHERE s_sender IS NOT NULL;
CREATE INDEX outbox_search_name ON outbox_search (s_name) WHERE s_name IS NOT NULL;
CREATE INDEX outbox_search_subject ON outbox_search (s_subject) WHERE s_subject IS NOT NULL;
CREATE INDEX outbox_search_message_id ON outbox_search (s_message_id) WHERE s_message_id IS NOT NULL;
CREATE INDEX outbox_search_comment_id ON outbox_search (s_comment_id);
CREATE INDEX outbox_console_route_id ON outbox (route, id);
CREATE INDEX outbox_search_route_adapter ON outbox_search (route, adapter);
CREATE INDEX outbox_unchanged ON outbox (id) WHERE status = 'delivered' AND outcome = 'unchanged';
CREATE TABLE outbox_attempts (
        item_id INTEGER NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
        route TEXT NOT NULL,
        at INTEGER NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'unchanged', 'retry', 'dead')),
        code TEXT,
        message TEXT,
        delay_ms INTEGER
      );
CREATE INDEX outbox_attempts_item ON outbox_attempts (item_id, at);
CREATE INDEX outbox_attempts_at ON outbox_attempts (at);
CREATE TABLE ai_units_daily (
        route TEXT NOT NULL,
        day TEXT NOT NULL,
        units INTEGER NOT NULL,
        PRIMARY KEY (route, day)
      ) WITHOUT ROWID;
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
CREATE TABLE "parse_attempts" (
        route TEXT NOT NULL,
        key TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (route, key)
      ) WITHOUT ROWID;
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
`;
