import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, parseSqliteUrl } from '../../src/store/index.js';
import { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION, migrateSqlite } from '../../src/store/sqlite/migrations.js';
import { claimSql } from '../../src/store/sqlite/outbox.js';
import { expectCode, input, storeContract } from '../contract/store.case.js';

const dir = mkdtempSync(join(tmpdir(), 'mailgate-sqlite-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = (): string => join(dir, `nested/dir-${(n += 1)}/store.db`);

storeContract('sqlite', async () => {
  const path = freshPath();
  return { open: (options) => openStore(`sqlite:${path}`, { ...options }) };
});

// The same contract with each durable commit's WAL sync on the thread pool (what `mailgate import` opens).
storeContract('sqlite, WAL synced off the event loop', async () => {
  const path = freshPath();
  return { open: (options) => openStore(`sqlite:${path}`, { ...options, sqlite: { syncOffThread: true } }) };
});

describe('SQLite store specifics', () => {
  it('creates parent directories and uses WAL with synchronous=FULL by default', async () => {
    const path = freshPath();
    const store = await openStore(`sqlite:${path}`);
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    // A new store's page size and incremental auto-vacuum (2), both written with its first page.
    expect(db.pragma('page_size', { simple: true })).toBe(8192);
    expect(db.pragma('auto_vacuum', { simple: true })).toBe(2);
    db.close();
    const { options } = parseSqliteUrl(`sqlite:${path}?synchronous=normal`);
    expect(options).toEqual({ synchronous: 'NORMAL' });
    expect(parseSqliteUrl('sqlite:///var/lib/mailgate/store.db').path).toBe('/var/lib/mailgate/store.db');
    expect(parseSqliteUrl('sqlite:data/mailgate.db')).toEqual({ path: 'data/mailgate.db', options: {} });
  });

  it('rejects bad URLs and options with a config error', async () => {
    await expectCode(openStore('mysql://localhost/db'), 'MAILGATE_ERR_CONFIG_INVALID');
    await expectCode(openStore('/just/a/path.db'), 'MAILGATE_ERR_CONFIG_INVALID');
    await expectCode(openStore('sqlite:'), 'MAILGATE_ERR_CONFIG_INVALID');
    await expectCode(openStore(`sqlite:${freshPath()}?synchronous=off`), 'MAILGATE_ERR_CONFIG_INVALID');
    await expectCode(openStore(`sqlite:${freshPath()}?cache=big`), 'MAILGATE_ERR_CONFIG_INVALID');
  });

  it('works in memory for tests', async () => {
    const store = await openStore('sqlite::memory:');
    expect(store.kind).toBe('sqlite');
    expect((await store.enqueue([input('r', 1)])).queued).toBe(1);
    expect(await store.outboxDepth()).toBe(1);
    await store.close();
  });

  it('drops raw bytes on delivery and keeps them for dead letters', async () => {
    const path = freshPath();
    const store = await openStore(`sqlite:${path}`);
    await store.enqueue([input('r', 1), input('r', 2)]);
    const [a, b] = await store.claim('r', 2, 'w', 60_000);
    await store.markDelivered([a?.id ?? 0], { outcome: 'delivered' });
    await store.deadLetter(b?.id ?? 0, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' });
    await store.close();
    const db = new Database(path, { readonly: true });
    const rows = db
      .prepare('SELECT status, EXISTS (SELECT 1 FROM outbox_raw r WHERE r.id = outbox.id) AS has_raw FROM outbox ORDER BY id')
      .all();
    db.close();
    expect(rows).toEqual([
      { status: 'delivered', has_raw: 0 },
      { status: 'dead', has_raw: 1 },
    ]);
  });

  it("reads a delivery's attempt from the item's row: no attempts row is written, and one an earlier version wrote is not shown twice", async () => {
    const path = freshPath();
    let store = await openStore(`sqlite:${path}`);
    await store.enqueue([input('r', 1)]);
    const [a] = await store.claim('r', 1, 'w', 60_000);
    await store.scheduleRetry([a!.id], 0, { code: 'MAILGATE_ERR_API_TIMEOUT', message: 'timed out' });
    await store.claim('r', 1, 'w', 60_000);
    await store.markDelivered([a!.id], { outcome: 'unchanged' });
    await store.close();
    const db = new Database(path);
    expect(db.prepare('SELECT outcome FROM outbox_attempts').all()).toEqual([{ outcome: 'retry' }]);
    // What an earlier version wrote for the delivery.
    db.prepare(`INSERT INTO outbox_attempts (item_id, route, at, outcome) SELECT id, route, finished_at, outcome FROM outbox`).run();
    const finished = db.prepare('SELECT finished_at FROM outbox').pluck().get() as number;
    db.close();
    store = await openStore(`sqlite:${path}`);
    const attempts = await store.itemAttempts(a!.id);
    expect(attempts.map((x) => x.outcome)).toEqual(['retry', 'unchanged']);
    expect(attempts[1]).toEqual({ at: new Date(finished).toISOString(), outcome: 'unchanged' });
    expect(await store.attemptCounts(new Date(0))).toEqual([
      { route: 'r', outcome: 'retry', count: 1 },
      { route: 'r', outcome: 'unchanged', count: 1 },
    ]);
    await store.close();
  });

  it('refuses a schema newer than it knows', async () => {
    const path = freshPath();
    await (await openStore(`sqlite:${path}`)).close();
    const db = new Database(path);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      SQLITE_SCHEMA_VERSION + 1,
      'future',
      Date.now(),
    );
    db.close();
    await expectCode(openStore(`sqlite:${path}`), 'MAILGATE_ERR_STORE_MIGRATION');
  });

  it('upgrades a version 1 database in place, keeping its queued items', async () => {
    const path = freshPath();
    const v1 = SQLITE_MIGRATIONS.filter((m) => m.version === 1);
    mkdirSync(join(path, '..'), { recursive: true });
    const db = new Database(path);
    migrateSqlite(db, v1);
    db.prepare(
      `INSERT INTO outbox (route, key, comment_id, status, next_attempt_at, enqueued_at, origin, document)
       VALUES ('r', 'k', 'c', 'queued', 0, 0, '{"adapter":"files"}', '{"raw_email":{"headers":{"raw":""},"body":{"plain":"x"}}}')`,
    ).run();
    db.close();
    const store = await openStore(`sqlite:${path}`);
    expect(await store.migrate()).toBe(SQLITE_SCHEMA_VERSION);
    const [item] = await store.claim('r', 10, 'w', 60_000);
    expect(item?.key).toBe('k');
    await store.markDelivered([item?.id ?? 0], { outcome: 'delivered' });
    expect(await store.pendingActions(10)).toEqual([]);
    await store.close();
  });

  it('upgrades a version 2 database in place, keeping queued, dead and delivered items', async () => {
    const path = freshPath();
    mkdirSync(join(path, '..'), { recursive: true });
    const db = new Database(path);
    migrateSqlite(
      db,
      SQLITE_MIGRATIONS.filter((m) => m.version <= 2),
    );
    const doc = (n: number): string =>
      JSON.stringify({ raw_email: { headers: { raw: `Subject: ${n}` }, body: { plain: `body ${n}` } }, comment_id: `c${n}` });
    const preview = { id: 'c1', timestamp: '2024-01-02T03:04:05Z', messages: [{ body: { text: 'hello' } }] };
    const warnings = [{ code: 'MAILGATE_WARN_NO_BODY', message: 'no body' }];
    const insert = db.prepare(
      `INSERT INTO outbox (route, key, comment_id, status, next_attempt_at, enqueued_at, finished_at, outcome, last_error,
         origin, warnings, document, preview, raw, action_due) VALUES (?, ?, ?, ?, 0, 1000, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const origin = (n: number): string => JSON.stringify({ adapter: 'imap', account: 'a', folder: 'INBOX', uid: n });
    // Read in today's shape: the account is the instance, the kind's fields its details, the key its id.
    const read = (n: number) => ({ adapter: 'imap', instance: 'a', id: `k${n}`, details: { folder: 'INBOX', uid: n } });
    insert.run(
      'r',
      'k1',
      'c1',
      'queued',
      null,
      null,
      null,
      origin(1),
      JSON.stringify(warnings),
      doc(1),
      JSON.stringify(preview),
      Buffer.from('raw 1'),
      1,
    );
    insert.run(
      'r',
      'k2',
      'c2',
      'dead',
      2000,
      null,
      '{"code":"MAILGATE_ERR_BATCH_REJECTED","message":"bad"}',
      origin(2),
      null,
      doc(2),
      null,
      Buffer.from('raw 2'),
      0,
    );
    insert.run('r', 'k3', 'c3', 'delivered', 3000, 'delivered', null, origin(3), null, doc(3), null, null, 1);
    insert.run(
      'r',
      'k4',
      'c4',
      'dead',
      4000,
      null,
      '{"code":"MAILGATE_ERR_MIME_TOO_LARGE","message":"big"}',
      origin(4),
      null,
      doc(4),
      null,
      null,
      0,
    );
    db.close();

    const store = await openStore(`sqlite:${path}`);
    expect(await store.migrate()).toBe(SQLITE_SCHEMA_VERSION);
    // The console's search rows are filled for items stored before them (without sender and subject).
    expect(await store.itemCounts()).toEqual([
      { route: 'r', adapter: 'imap', state: 'dead', count: 2 },
      { route: 'r', adapter: 'imap', state: 'delivered', count: 1 },
      { route: 'r', adapter: 'imap', state: 'queued', count: 1 },
    ]);
    expect((await store.listItems({ limit: 10, adapter: 'imap', account: 'a', q: 'C3' })).map((i) => [i.key, i.subject])).toEqual([
      ['k3', undefined],
    ]);
    expect(await store.outboxCounts()).toEqual([
      { route: 'r', status: 'dead', count: 2 },
      { route: 'r', status: 'delivered', count: 1 },
      { route: 'r', status: 'queued', count: 1 },
    ]);
    expect(await store.pendingActions(10)).toEqual([{ id: 3, route: 'r', origin: read(3) }]);
    const dead = await store.listDeadLetters({ limit: 10 });
    expect(dead.map((d) => [d.id, d.key, d.hasRaw, d.error.code])).toEqual([
      [2, 'k2', true, 'MAILGATE_ERR_BATCH_REJECTED'],
      [4, 'k4', false, 'MAILGATE_ERR_MIME_TOO_LARGE'],
    ]);
    const detail = await store.getDeadLetter(2);
    expect(detail?.raw?.toString()).toBe('raw 2');
    expect(detail?.document).toEqual(JSON.parse(doc(2)));
    expect((await store.getDeadLetter(4))?.raw).toBeUndefined();
    const [item] = await store.claim('r', 10, 'w', 60_000);
    expect(item).toMatchObject({
      id: 1,
      key: 'k1',
      commentId: 'c1',
      document: JSON.parse(doc(1)),
      preview,
      warnings,
      origin: read(1),
    });
    expect(await store.markDelivered([1], { outcome: 'delivered' })).toBe(1);
    expect((await store.pendingActions(10)).map((a) => a.id)).toEqual([1, 3]);
    expect(await store.replayDeadLetter(2, input('r', 2, { key: 'k2' }))).toEqual({ id: 2, status: 'queued' });
    expect((await store.claim('r', 10, 'w', 60_000)).map((i) => i.key)).toEqual(['k2']);
    await store.close();
    const check = new Database(path, { readonly: true });
    const columns = (check.prepare('PRAGMA table_info(outbox)').all() as Array<{ name: string }>).map((c) => c.name);
    const raws = check.prepare('SELECT id FROM outbox_raw ORDER BY id').all();
    check.close();
    expect(columns).not.toContain('raw');
    expect(columns).not.toContain('document');
    expect(raws).toEqual([{ id: 2 }]);
  });

  it('reports a store it cannot open as unavailable', async () => {
    const file = join(dir, 'not-a-db.db');
    writeFileSync(file, 'this is not a database file, just text that is long enough to have a header.'.repeat(20));
    await expectCode(openStore(`sqlite:${file}`), 'MAILGATE_ERR_STORE_UNAVAILABLE');
  });
});

describe('SQLite claims read only queued items', () => {
  it('a route claim walks the queued index, not every delivered item of the route (claim scanning delivered items)', () => {
    const db = new Database(':memory:');
    migrateSqlite(db);
    const plan = (sql: string): string =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ now: 0, owner: 'o', until: 1, limit: 1, route: 'r' }) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join('\n');
    expect(plan(claimSql(true))).toContain('USING INDEX outbox_ready_route (route=?)');
    expect(plan(claimSql(false))).toContain('outbox_ready');
    expect(plan(claimSql(true))).not.toContain('outbox_console_route_id');
    db.close();
  });
});
