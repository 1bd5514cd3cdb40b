/**
 * Versioned PostgreSQL schema. All pending migrations run in one transaction under an
 * advisory lock, so replicas starting together apply each exactly once. A database whose
 * schema is newer than the newest migration here is refused.
 *
 * Documents, previews and other mail-derived values are `json`, not `jsonb`: jsonb refuses
 * the `\u0000` escape that real mail produces, and nothing queries inside them.
 */
import type pg from 'pg';
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
import { withTransaction } from './db.js';
import { FRESH_SCHEMA_SQL, FRESH_SCHEMA_VERSION } from './fresh-schema.js';

/** Arbitrary constant key for pg_advisory_xact_lock: "mailgate" schema migrations. */
const MIGRATION_LOCK_KEY = 0x6d61696c67617465n;

export const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
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
        document JSON NOT NULL,
        preview JSON,
        raw BYTEA
      );
      -- lz4 (PostgreSQL 14+, when built with it) compresses large values several times faster than pglz.
      DO $$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
          EXECUTE 'ALTER TABLE outbox ALTER COLUMN raw SET COMPRESSION lz4, ALTER COLUMN document SET COMPRESSION lz4,
            ALTER COLUMN preview SET COMPRESSION lz4';
        END IF;
      END $$;
      CREATE UNIQUE INDEX outbox_route_key ON outbox (route, key);
      CREATE INDEX outbox_ready_route ON outbox (route, id) WHERE status = 'queued';
      CREATE INDEX outbox_ready ON outbox (id) WHERE status = 'queued';
      CREATE INDEX outbox_dead ON outbox (id) WHERE status = 'dead';
      CREATE INDEX outbox_dead_route ON outbox (route, id) WHERE status = 'dead';
      CREATE INDEX outbox_delivered ON outbox (finished_at) WHERE status = 'delivered';

      CREATE TABLE checkpoints (
        key TEXT PRIMARY KEY,
        value JSON NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
      );

      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
      );

      CREATE TABLE ledger (
        source TEXT NOT NULL,
        comment_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        props_hash TEXT NOT NULL,
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
    `,
  },
  {
    version: 2,
    name: 'after-delivery actions',
    sql: `
      ALTER TABLE outbox ADD COLUMN action_due BOOLEAN NOT NULL DEFAULT false;
      CREATE INDEX outbox_actions ON outbox (id) WHERE status = 'delivered' AND action_due;
    `,
  },
  {
    // Claims, outcomes and retries write a new version of a narrow row only; the wide values
    // live in side tables keyed by outbox id: the document and preview until the item is
    // pruned or purged, the raw bytes until it is delivered (deleting the side row drops them).
    version: 3,
    name: 'wide columns in side tables',
    sql: `
      CREATE TABLE outbox_docs (
        id BIGINT PRIMARY KEY,
        document JSON NOT NULL,
        preview JSON
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
      INSERT INTO outbox_docs (id, document, preview) SELECT id, document, preview FROM outbox;
      INSERT INTO outbox_raw (id, raw) SELECT id, raw FROM outbox WHERE raw IS NOT NULL;
      ALTER TABLE outbox DROP COLUMN document, DROP COLUMN preview, DROP COLUMN raw;
    `,
  },
  {
    // As SQLite migration 4: the ledger's second hash covers the whole document; older
    // entries keep a marked text hash; intake stores both hashes with the document.
    version: 4,
    name: 'ledger document hash, hashes stored with the document',
    sql: `
      ALTER TABLE ledger RENAME COLUMN props_hash TO doc_hash;
      UPDATE ledger SET text_hash = 'v1:' || text_hash;
      ALTER TABLE outbox_docs ADD COLUMN text_hash TEXT, ADD COLUMN doc_hash TEXT;
    `,
  },
  {
    // As SQLite migration 5: a pushed message's provider event id is a second key naming the
    // item its bytes are stored as; it lives as long as that item.
    version: 5,
    name: 'outbox key aliases',
    sql: `
      CREATE TABLE outbox_aliases (
        route TEXT NOT NULL,
        key TEXT NOT NULL,
        item_id BIGINT NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
        PRIMARY KEY (route, key)
      );
      CREATE INDEX outbox_aliases_item ON outbox_aliases (item_id);
    `,
  },
  {
    // As SQLite migration 6: processes that claim work register with their identity and a
    // heartbeat, so a dead one's claims are taken back without waiting out the lease.
    version: 6,
    name: 'owners',
    sql: `
      CREATE TABLE owners (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        proc_start TEXT,
        heartbeat_ms INTEGER NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        heartbeat_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX outbox_claimed ON outbox (lease_owner) WHERE status = 'queued' AND lease_owner IS NOT NULL;
    `,
  },
  {
    version: 7,
    name: 'lease fencing tokens',
    // A lease row now outlives its release (expires_at 'epoch') so that its token only grows.
    sql: `
      ALTER TABLE leases ADD COLUMN token BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE owners ADD COLUMN lease_group TEXT;
    `,
  },
  {
    // As SQLite migration 8: the console's search fields per item (lower-cased copies in
    // binary order for prefix ranges; items stored before get one without sender and subject),
    // delivery attempts and AI units per day. Number 7 belongs to lease fencing.
    version: 8,
    name: 'console: item search fields, delivery attempts, AI units per day',
    sql: `
      CREATE TABLE outbox_search (
        id BIGINT PRIMARY KEY REFERENCES outbox (id) ON DELETE CASCADE,
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
      INSERT INTO outbox_search (id, route, adapter, account, s_comment_id)
        SELECT id, route, COALESCE(origin->>'adapter', 'unknown'), origin->>'account', lower(comment_id) FROM outbox;

${attemptsTableSql('BIGINT', 'TIMESTAMPTZ')}

      CREATE TABLE ai_units_daily (
        route TEXT NOT NULL,
        day TEXT NOT NULL,
        units BIGINT NOT NULL,
        PRIMARY KEY (route, day)
      );
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

      CREATE TABLE parse_attempts (
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

      INSERT INTO route_pauses (route, target, code, message, since, until, updated_at)
        SELECT substr(key, 13), value->>'target', value->>'code', COALESCE(value->>'message', ''), value->>'since', value->>'until', clock_timestamp()
        FROM checkpoints WHERE key LIKE 'route-pause:%' AND value->>'paused' = 'true'
          AND value->>'target' IS NOT NULL AND value->>'code' IS NOT NULL AND value->>'since' IS NOT NULL AND value->>'until' IS NOT NULL;
      DELETE FROM checkpoints WHERE key LIKE 'route-pause:%';
    `,
  },
  {
    // Parse attempts are written and deleted for every message a pull call reads, and must
    // outlive mailgate's process, not the server (src/pipeline/poison.ts): an UNLOGGED table
    // writes no WAL for them. A server crash empties it, which gives a message that was being
    // counted up to poison_after attempts again; a replica promoted from a standby starts empty.
    version: 10,
    name: 'parse attempts unlogged',
    sql: `
      ALTER TABLE parse_attempts SET UNLOGGED;
    `,
  },
  {
    // Intake adds to a route's `enqueued` and delivery to its `delivered` and `ai_units`: as
    // columns of one `route_counters` row, every intake commit and every delivery commit of a
    // route waited for the other's COMMIT (the row lock). From here on each (route, counter) is its
    // own row; `route_counters` keeps the totals counted before (an older replica rolling along
    // still adds there) and the counters read the sum of both.
    version: 11,
    name: 'route counters: one row per counter',
    sql: `
      CREATE TABLE route_counts (
        route TEXT NOT NULL,
        counter TEXT NOT NULL CHECK (counter IN ('enqueued', 'delivered', 'unchanged', 'dead_lettered', 'ai_units')),
        n BIGINT NOT NULL,
        PRIMARY KEY (route, counter)
      );
    `,
  },
  {
    // The search row and the attempts of an item were tied to it by foreign keys: every row
    // written (one search row per item stored, one attempt per outcome) ran a trigger that
    // locked its outbox row (a tuple rewrite and WAL record each). They are deleted with their
    // item explicitly instead (`deleteItems`, the one place outbox rows are deleted).
    version: 12,
    name: 'search rows and attempts without foreign keys',
    sql: `
      ALTER TABLE outbox_search DROP CONSTRAINT outbox_search_id_fkey;
      ALTER TABLE outbox_attempts DROP CONSTRAINT outbox_attempts_item_id_fkey;
    `,
  },
  {
    // A claim, a lease renewal and a retry change no indexed column once the index of claimed
    // items is gone, so PostgreSQL rewrites the outbox row in place (a HOT update: no new entry
    // in each of the outbox's indexes per claimed item) when its page has room, which the fill
    // factor keeps on pages written from now on. What an owner holds is found instead from
    // `outbox_claims`: one row per claim or renewal (its ids and lease expiry), deleted by the
    // owner's next claim once expired or when the owner is taken back; taking back a dead owner's
    // claims reads its rows only. Claims held at the upgrade are registered here.
    version: 13,
    name: 'outbox claims as in-place updates, claims registered per owner',
    sql: `
      CREATE TABLE outbox_claims (
        owner TEXT NOT NULL,
        ids BIGINT[] NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX outbox_claims_owner ON outbox_claims (owner, expires_at);
      INSERT INTO outbox_claims (owner, ids, expires_at)
        SELECT lease_owner, array_agg(id), MAX(lease_expires_at) FROM outbox
        WHERE status = 'queued' AND lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL GROUP BY lease_owner;
      DROP INDEX outbox_claimed;
      ALTER TABLE outbox SET (fillfactor = 70);
    `,
  },
];

/** The schema a new database gets in one step (./fresh-schema.ts). */
const SCHEMA_TEXT: SchemaText = { own: PG_MIGRATIONS, version: FRESH_SCHEMA_VERSION };

async function apply(client: pg.PoolClient, migrations: readonly Migration[]): Promise<number> {
  await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY.toString()]);
  await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())`);
  const { rows } = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
  const found = rows[0]?.v ?? 0;
  const latest = latestVersion(migrations);
  checkNotNewer(found, latest);
  // A new database gets the schema in one statement text, recorded as every migration applied.
  if (takesSchemaText(SCHEMA_TEXT, found, migrations)) {
    try {
      await client.query(FRESH_SCHEMA_SQL);
      await client.query('INSERT INTO schema_migrations (version, name) SELECT * FROM unnest($1::integer[], $2::text[])', [
        migrations.map((m) => m.version),
        migrations.map((m) => m.name),
      ]);
    } catch (err) {
      throw schemaTextFailed(SCHEMA_TEXT, err);
    }
    return latest;
  }
  for (const m of migrations) {
    if (m.version <= found) continue;
    try {
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    } catch (err) {
      throw migrationFailed(m, err);
    }
  }
  return Math.max(found, latest);
}

/** Applies what is missing; returns the schema version. */
export function migratePostgres(pool: pg.Pool, migrations: readonly Migration[] = PG_MIGRATIONS): Promise<number> {
  return withTransaction(pool, (client) => apply(client, migrations));
}
