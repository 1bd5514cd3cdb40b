/**
 * The schema a new PostgreSQL database is created with, in one statement text (one round trip):
 * what the migrations (./migrations.ts) leave. A new database ran all thirteen migrations before,
 * one round trip each, with the columns they move and drop, the foreign keys and index they drop
 * again, and a table rewritten as unlogged: 59 ms against 47 this way (docs/store.md "Migrations").
 * A database at an earlier version still goes through the migrations.
 * test/store/postgres-fresh-schema.test.ts checks that both ways give the same schema.
 */
import { CONSOLE_INDEXES_SQL } from '../migrate.js';

/** The version this schema is: the newest migration's. */
export const FRESH_SCHEMA_VERSION = 13;

export const FRESH_SCHEMA_SQL = `
      CREATE TABLE outbox (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        route TEXT NOT NULL,
        key TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'delivered', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        lease_owner TEXT,
        lease_expires_at TIMESTAMPTZ,
        enqueued_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        finished_at TIMESTAMPTZ,
        outcome TEXT,
        last_error JSON,
        origin JSON NOT NULL,
        warnings JSON,
        action_due BOOLEAN NOT NULL DEFAULT false
      ) WITH (fillfactor = 70);
      CREATE UNIQUE INDEX outbox_route_key ON outbox (route, key);
      CREATE INDEX outbox_ready_route ON outbox (route, id) WHERE status = 'queued';
      CREATE INDEX outbox_ready ON outbox (id) WHERE status = 'queued';
      CREATE INDEX outbox_dead ON outbox (id) WHERE status = 'dead';
      CREATE INDEX outbox_dead_route ON outbox (route, id) WHERE status = 'dead';
      CREATE INDEX outbox_delivered ON outbox (finished_at) WHERE status = 'delivered';
      CREATE INDEX outbox_actions ON outbox (id) WHERE status = 'delivered' AND action_due;

      CREATE TABLE checkpoints (
        key TEXT PRIMARY KEY,
        value JSON NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
      );

      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL,
        token BIGINT NOT NULL DEFAULT 0
      );

      CREATE TABLE ledger (
        source TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        doc_hash TEXT NOT NULL,
        outcome TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (source, comment_id)
      );

      CREATE TABLE threads (
        source TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        ts TIMESTAMPTZ NOT NULL,
        timestamp TEXT NOT NULL,
        from_addr TEXT,
        participants JSON NOT NULL,
        PRIMARY KEY (source, comment_id)
      );
      CREATE INDEX threads_by_thread ON threads (source, thread_id, ts);

      CREATE TABLE predictions (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        route TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        key TEXT NOT NULL,
        predictions JSON NOT NULL,
        model JSON,
        created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (route, comment_id)
      );

      CREATE TABLE route_counters (
        route TEXT PRIMARY KEY,
        enqueued BIGINT NOT NULL DEFAULT 0,
        delivered BIGINT NOT NULL DEFAULT 0,
        unchanged BIGINT NOT NULL DEFAULT 0,
        dead_lettered BIGINT NOT NULL DEFAULT 0,
        ai_units BIGINT NOT NULL DEFAULT 0
      );

      CREATE TABLE outbox_docs (
        id BIGINT PRIMARY KEY,
        document JSON NOT NULL,
        preview JSON,
        text_hash TEXT,
        doc_hash TEXT
      );
      CREATE TABLE outbox_raw (
        id BIGINT PRIMARY KEY,
        raw BYTEA NOT NULL
      );
      DO $$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
          EXECUTE 'ALTER TABLE outbox_docs ALTER COLUMN document SET COMPRESSION lz4, ALTER COLUMN preview SET COMPRESSION lz4';
          EXECUTE 'ALTER TABLE outbox_raw ALTER COLUMN raw SET COMPRESSION lz4';
        END IF;
      END $$;

      CREATE TABLE outbox_aliases (
        route TEXT NOT NULL,
        key TEXT NOT NULL,
        item_id BIGINT NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
        PRIMARY KEY (route, key)
      );
      CREATE INDEX outbox_aliases_item ON outbox_aliases (item_id);

      CREATE TABLE owners (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        proc_start TEXT,
        heartbeat_ms INTEGER NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        heartbeat_at TIMESTAMPTZ NOT NULL,
        lease_group TEXT
      );

      CREATE TABLE outbox_search (
        id BIGINT PRIMARY KEY,
        route TEXT NOT NULL,
        adapter TEXT NOT NULL,
        account TEXT,
        sender TEXT,
        sender_name TEXT,
        subject TEXT,
        message_id TEXT,
        msg_ts TIMESTAMPTZ,
        s_sender TEXT COLLATE "C",
        s_name TEXT COLLATE "C",
        s_subject TEXT COLLATE "C",
        s_message_id TEXT COLLATE "C",
        s_comment_id TEXT COLLATE "C" NOT NULL
      );
${CONSOLE_INDEXES_SQL}

      CREATE TABLE outbox_attempts (
        item_id BIGINT NOT NULL,
        route TEXT NOT NULL,
        at TIMESTAMPTZ NOT NULL,
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
        units BIGINT NOT NULL,
        PRIMARY KEY (route, day)
      );

      CREATE TABLE route_pauses (
        route TEXT PRIMARY KEY,
        target TEXT NOT NULL,
        code TEXT NOT NULL,
        message TEXT NOT NULL,
        since TEXT NOT NULL,
        until TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );

      CREATE TABLE mailbox_states (
        mailbox TEXT PRIMARY KEY,
        enabled BOOLEAN NOT NULL,
        reason TEXT CHECK (reason IN ('user', 'quota', 'sync_error')),
        error_kind TEXT,
        error_code TEXT,
        error_message TEXT,
        by_command BOOLEAN NOT NULL,
        failing_since TEXT,
        updated_at TIMESTAMPTZ NOT NULL
      );

      CREATE UNLOGGED TABLE parse_attempts (
        route TEXT NOT NULL,
        key TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
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
        updated_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (mailbox, folder)
      );

      CREATE TABLE route_counts (
        route TEXT NOT NULL,
        counter TEXT NOT NULL CHECK (counter IN ('enqueued', 'delivered', 'unchanged', 'dead_lettered', 'ai_units')),
        n BIGINT NOT NULL,
        PRIMARY KEY (route, counter)
      );

      CREATE TABLE outbox_claims (
        owner TEXT NOT NULL,
        ids BIGINT[] NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX outbox_claims_owner ON outbox_claims (owner, expires_at);
`;
