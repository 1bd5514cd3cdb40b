/**
 * Upgrades: a store written by every earlier schema version, with data in every table (queued,
 * delivered and dead items, a checkpoint, a lease, an owner, the ledger, the thread index,
 * predictions, counters, aliases, console rows), opened by today's code on SQLite and PostgreSQL.
 * The migration keeps everything and work carries on exactly: only the queued item is sent, the
 * delivered one is neither re-sent nor re-billed, keys stay known, the dead letter stays
 * replayable; a route pause kept as a checkpoint before migration 9 becomes a route pause. The
 * store at today's version is seeded and opened too, so a table added by a migration must be
 * seeded here the day it is added, or the test fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { createDeliverFn, createDelivery } from '../../src/pipeline/delivery/index.js';
import { openStore } from '../../src/store/index.js';
import type { Migration } from '../../src/store/migrate.js';
import { migratePostgres, PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { migrateSqlite, SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import type { Store } from '../../src/store/types.js';
import { startEmulator } from '../support/emulator.js';
import { createTestDatabase, stopTestServer } from '../support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'mailgate-upgrades-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stopTestServer();
});

/** What seeding needs of a database at some schema version. */
interface Dialect {
  tables(): Promise<string[]>;
  columns(table: string): Promise<Set<string>>;
  /** Inserts the row's columns the table has; answers the new row's id when `returning`. */
  insert(table: string, row: Record<string, unknown>, returning?: boolean): Promise<number | undefined>;
  count(table: string): Promise<number>;
  time(ms: number): unknown;
  bool(b: boolean): unknown;
  close(): Promise<void>;
}

function sqliteDialect(db: Database.Database): Dialect {
  return {
    tables: async () =>
      (db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all() as Array<{ name: string }>).map(
        (r) => r.name,
      ),
    columns: async (t) => new Set((db.prepare(`PRAGMA table_info(${t})`).all() as Array<{ name: string }>).map((c) => c.name)),
    async insert(t, row, returning) {
      const cols = Object.keys(row);
      const sql = `INSERT INTO ${t} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})${returning ? ' RETURNING id' : ''}`;
      const stmt = db.prepare(sql);
      if (!returning) return void stmt.run(...Object.values(row));
      return (stmt.get(...Object.values(row)) as { id: number }).id;
    },
    count: async (t) => (db.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n,
    time: (ms) => ms,
    bool: (b) => (b ? 1 : 0),
    close: async () => void db.close(),
  };
}

function pgDialect(pool: pg.Pool): Dialect {
  return {
    tables: async () =>
      (await pool.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema()`)).rows.map((r) => r.t),
    columns: async (t) =>
      new Set(
        (
          await pool.query<{ c: string }>(
            `SELECT column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
            [t],
          )
        ).rows.map((r) => r.c),
      ),
    async insert(t, row, returning) {
      const cols = Object.keys(row);
      const sql = `INSERT INTO ${t} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})${returning ? ' RETURNING id' : ''}`;
      const res = await pool.query<{ id: string }>(sql, Object.values(row));
      return returning ? Number(res.rows[0]!.id) : undefined;
    },
    count: async (t) => Number((await pool.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${t}`)).rows[0]!.n),
    time: (ms) => new Date(ms),
    bool: (b) => b,
    close: () => pool.end(),
  };
}

const HOUR = 3_600_000;
const doc = (n: number) =>
  JSON.stringify({
    raw_email: { headers: { raw: `Subject: upgraded ${n}\r\nFrom: a@example.com` }, body: { plain: `body ${n}` } },
    comment_id: `c${n}`,
  });
const origin = (n: number) => JSON.stringify({ adapter: 'imap', account: 'acct', folder: 'INBOX', uidValidity: 7, uid: n });

/** One row in every table the schema has, with only the columns it has. */
async function seed(d: Dialect): Promise<void> {
  const t0 = Date.now() - HOUR;
  const only = async (table: string, row: Record<string, unknown>, returning = false) => {
    const cols = await d.columns(table);
    if (cols.size === 0) return undefined;
    return d.insert(table, Object.fromEntries(Object.entries(row).filter(([k]) => cols.has(k))), returning);
  };
  const items = [
    { n: 1, status: 'queued', raw: 'raw 1', finished: null, outcome: null, error: null },
    { n: 2, status: 'delivered', raw: null, finished: t0 + 1000, outcome: 'delivered', error: null },
    {
      n: 3,
      status: 'dead',
      raw: 'raw 3',
      finished: t0 + 2000,
      outcome: null,
      error: '{"code":"MAILGATE_ERR_BATCH_REJECTED","message":"bad"}',
    },
  ];
  for (const it of items) {
    const raw = it.raw === null ? null : Buffer.from(it.raw);
    const id = await only(
      'outbox',
      {
        route: 'r',
        key: `imap:acct:INBOX:7:${it.n}`,
        comment_id: `c${it.n}`,
        status: it.status,
        attempts: 0,
        next_attempt_at: d.time(t0),
        enqueued_at: d.time(t0),
        finished_at: it.finished === null ? null : d.time(it.finished),
        outcome: it.outcome,
        last_error: it.error,
        origin: origin(it.n),
        warnings: null,
        document: doc(it.n),
        preview: null,
        raw,
        action_due: d.bool(false),
      },
      true,
    );
    await only('outbox_docs', { id, document: doc(it.n), preview: null, text_hash: null, doc_hash: null });
    if (raw !== null) await only('outbox_raw', { id, raw });
    // PostgreSQL since migration 13: a claim registered by an owner, long expired.
    if (it.status === 'queued') await only('outbox_claims', { owner: 'old-owner', ids: [id], expires_at: d.time(t0) });
    await only('outbox_search', {
      id,
      route: 'r',
      adapter: 'imap',
      account: 'acct',
      subject: `upgraded ${it.n}`,
      s_comment_id: `c${it.n}`,
    });
    // SQLite since migration 11: a search row an enqueue left for the console's next fold (the
    // queued item's, newer than its indexed one).
    if (it.n === 1) {
      await only('outbox_search_new', {
        id,
        route: 'r',
        adapter: 'imap',
        account: 'acct',
        subject: 'waiting 1',
        s_subject: 'waiting 1',
        s_comment_id: 'c1',
      });
    }
    if (it.n === 3) await only('outbox_aliases', { route: 'r', key: 'webhook:raw:evt-3', item_id: id });
    if (it.status !== 'queued')
      await only('outbox_attempts', {
        item_id: id,
        route: 'r',
        at: d.time(it.finished!),
        outcome: it.status === 'dead' ? 'dead' : 'delivered',
      });
  }
  await only('checkpoints', { key: 'imap:acct:INBOX', value: '{"uidValidity":7,"lastUid":3}', updated_at: d.time(t0) });
  await only('leases', { name: 'imap:acct', owner: 'old-owner', expires_at: d.time(Date.now() + HOUR), token: 5 });
  await only('owners', {
    id: 'old-owner',
    host: 'old-host',
    pid: 1,
    proc_start: null,
    heartbeat_ms: 5000,
    started_at: d.time(t0),
    heartbeat_at: d.time(Date.now()),
    lease_group: null,
  });
  await only('ledger', {
    source: 'acme/up',
    comment_id: 'c2',
    text_hash: 'text-2',
    props_hash: 'props-2',
    doc_hash: 'doc-2',
    outcome: 'delivered',
    updated_at: new Date(t0).toISOString(),
  });
  await only('threads', {
    source: 'acme/up',
    comment_id: 'c2',
    thread_id: 't2',
    ts_ms: t0,
    ts: d.time(t0),
    timestamp: new Date(t0).toISOString(),
    from_addr: 'a@example.com',
    participants: '["a@example.com"]',
  });
  // SQLite since migration 12: a thread index entry an enqueue left for the next fold (the queued item's).
  await only('threads_new', {
    source: 'acme/up',
    comment_id: 'c1',
    thread_id: 't1',
    ts_ms: t0,
    timestamp: new Date(t0).toISOString(),
    from_addr: null,
    participants: '[]',
  });
  await only('predictions', { route: 'p', comment_id: 'c9', key: 'k9', predictions: '[]', model: null, created_at: d.time(t0) });
  await only('route_counters', { route: 'r', enqueued: 3, delivered: 1, unchanged: 0, dead_lettered: 1, ai_units: 1 });
  // PostgreSQL since migration 11: one row per (route, counter), added to route_counters' columns.
  await only('route_counts', { route: 'r', counter: 'unchanged', n: 2 });
  await only('ai_units_daily', { route: 'r', day: new Date(t0).toISOString().slice(0, 10), units: 1 });
  // Controls (migration 9). Before it, a route's pause was a checkpoint that migration moves.
  const at = new Date(t0).toISOString();
  const until = new Date(Date.now() + 24 * HOUR).toISOString();
  const pause = { target: 'acme/paused', code: 'MAILGATE_ERR_API_FORBIDDEN', message: 'forbidden', since: at, until };
  if (!(await d.tables()).includes('route_pauses')) {
    await only('checkpoints', { key: 'route-pause:old', value: JSON.stringify({ paused: true, ...pause }), updated_at: d.time(t0) });
  }
  await only('route_pauses', { route: 'new', ...pause, updated_at: at });
  await only('mailbox_states', {
    mailbox: 'acct',
    enabled: d.bool(false),
    reason: 'user',
    error_kind: null,
    error_code: null,
    error_message: null,
    by_command: d.bool(true),
    failing_since: null,
    updated_at: at,
  });
  await only('folder_states', {
    mailbox: 'acct',
    folder: 'INBOX',
    state: 'up_to_date',
    synced_until: at,
    last_synced: at,
    behind: 0,
    filtered: 2,
    updated_at: at,
  });
  await only('parse_attempts', { route: 'r', key: 'imap:acct:INBOX:7:9', attempts: 2, updated_at: at });
  for (const t of await d.tables()) {
    if (t === 'schema_migrations') continue;
    expect(await d.count(t), `table ${t} seeded`).toBeGreaterThan(0);
  }
}

/** After the upgrade: everything kept, and delivery sends exactly the queued item once. */
async function carriesOn(store: Store, latest: number, from: number): Promise<void> {
  expect(await store.migrate()).toBe(latest);
  expect(await store.getCheckpoint('imap:acct:INBOX')).toEqual({ uidValidity: 7, lastUid: 3 });
  expect((await store.getLease('imap:acct'))?.owner).toBe('old-owner');
  const keys = [1, 2, 3].map((n) => `imap:acct:INBOX:7:${n}`);
  expect(await store.knownKeys('r', keys)).toEqual(new Set(keys));
  if (from >= 5) expect((await store.findKeys('r', ['webhook:raw:evt-3'])).size).toBe(1);
  const dead = (await store.listDeadLetters({ limit: 10 }))[0]!;
  expect(dead.key).toBe(keys[2]);
  expect((await store.getDeadLetter(dead.id))?.raw?.toString()).toBe('raw 3');
  const ledger = (await store.lookup('acme/up', ['c2'])).get('c2');
  expect(ledger?.textHash).toBe(from < 4 ? 'v1:text-2' : 'text-2');
  expect((await store.threadMembers('acme/up', ['t2'])).get('t2')?.map((e) => e.commentId)).toEqual(['c2']);
  expect((await store.listPredictions({ limit: 10 })).map((p) => p.commentId)).toEqual(['c9']);
  // The waiting thread index entry is folded by the read of its thread.
  if (store.kind === 'sqlite' && from >= 12) {
    expect((await store.threadMembers('acme/up', ['t1'])).get('t1')?.map((e) => e.commentId)).toEqual(['c1']);
  }
  // The waiting search row is folded by the search that reads it, over the indexed one.
  if (store.kind === 'sqlite' && from >= 11) {
    expect((await store.listItems({ q: 'WAITING', limit: 10 })).map((i) => [i.commentId, i.subject])).toEqual([['c1', 'waiting 1']]);
  }
  // A pause written as a checkpoint before migration 9 is a route pause after it, and no checkpoint.
  const pauses = await store.listRoutePauses();
  expect(pauses.map((p) => p.route)).toEqual([from < 9 ? 'old' : 'new']);
  expect(pauses[0]).toMatchObject({ target: 'acme/paused', code: 'MAILGATE_ERR_API_FORBIDDEN', message: 'forbidden' });
  expect((await store.listCheckpoints()).map((c) => c.key)).toEqual(['imap:acct:INBOX']);
  if (from >= 9) {
    expect(await store.mailboxState('acct')).toMatchObject({ enabled: false, reason: 'user', byCommand: true, filtered: 2 });
    expect((await store.mailboxState('acct'))?.folders).toMatchObject([{ folder: 'INBOX', state: 'up_to_date', filtered: 2 }]);
    expect(await store.parseAttempts('r', ['imap:acct:INBOX:7:9'])).toEqual(new Map([['imap:acct:INBOX:7:9', 2]]));
  }

  const emu = await startEmulator({ autoCreateSources: true });
  try {
    const config = ConfigSchema.parse({ routes: [{ name: 'r', source: 'acme/up' }] });
    const delivery = createDelivery({
      store,
      routes: config.routes,
      deliver: createDeliverFn({
        client: createApiClient({ baseUrl: emu.url, token: emu.token, retry: { maxAttempts: 1 } }),
        ledger: store,
        config,
      }),
      owner: 'new-owner',
      leaseMs: 10_000,
      claimLimit: 100,
      concurrency: 1,
      maxItemAttempts: 3,
      pauseMs: 60_000,
    });
    await delivery.run(new AbortController().signal, async () => (await store.outboxDepth('r')) === 0);
    // Only the queued item went out, once; the delivered one was not sent again.
    expect(emu.emulator.stats()).toMatchObject({ comments: 1, ai_units: 1 });
  } finally {
    await emu.stop();
  }
  const unchanged = store.kind === 'postgres' && from >= 11 ? 2 : 0;
  expect((await store.counters()).find((c) => c.route === 'r')).toEqual({
    route: 'r',
    enqueued: 3,
    delivered: 2,
    unchanged,
    deadLettered: 1,
    aiUnits: 2,
  });
  expect(await store.outboxCounts()).toEqual([
    { route: 'r', status: 'dead', count: 1 },
    { route: 'r', status: 'delivered', count: 2 },
  ]);
  // Read again (the folder re-read): nothing new is stored.
  const again = await store.enqueue([
    {
      route: 'r',
      key: keys[1]!,
      commentId: 'c2',
      document: JSON.parse(doc(2)) as never,
      origin: JSON.parse(origin(2)) as never,
    },
  ]);
  expect(again.duplicates).toBe(1);
}

/**
 * Every version up to today's: today's too, so that the seed covers every table there is (a
 * table the next migration keeps must already be seeded when that migration arrives).
 */
const earlier = (migrations: readonly Migration[]) => {
  const latest = Math.max(...migrations.map((m) => m.version));
  return { latest, versions: migrations.map((m) => m.version).filter((v) => v <= latest) };
};

describe("upgrades from every earlier schema version (and today's)", () => {
  const sqlite = earlier(SQLITE_MIGRATIONS);
  it.each(sqlite.versions)('SQLite: a store at version %i with data in every table', async (v) => {
    const path = join(dir, `v${v}.db`);
    const db = new Database(path);
    migrateSqlite(
      db,
      SQLITE_MIGRATIONS.filter((m) => m.version <= v),
    );
    await seed(sqliteDialect(db));
    db.close();
    const store = await openStore(`sqlite:${path}`);
    try {
      await carriesOn(store, sqlite.latest, v);
    } finally {
      await store.close();
    }
  });

  const postgres = earlier(PG_MIGRATIONS);
  it.each(postgres.versions)('PostgreSQL: a store at version %i with data in every table', async (v) => {
    const url = await createTestDatabase('mailgate_upgrade');
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    await migratePostgres(
      pool,
      PG_MIGRATIONS.filter((m) => m.version <= v),
    );
    await seed(pgDialect(pool));
    await pool.end();
    const store = await openStore(url, { postgres: { poolSize: 2 } });
    try {
      await carriesOn(store, postgres.latest, v);
    } finally {
      await store.close();
    }
  });
});
