/** SQLite controls: route pauses, mailbox states and folder sync states (src/store/contract/controls.ts). */
import type Database from 'better-sqlite3';
import { journalOf, type AttemptsJournal, type Counts } from './attempts-journal.js';
import type { LightWrites } from './light.js';
import { statement } from './statements.js';
import type { Backend } from '../compose.js';
import { checkFilteredCount, mailboxRows, mergeMailboxState, type FolderRowIn, type MailboxRowIn } from '../controls-rows.js';
import type { ControlStore, FolderStateInput, MailboxStateInput, MailboxStateRow, RoutePauseRow } from '../types.js';

export class SqliteControls implements Backend<ControlStore> {
  /** Statements of the parse-attempt writes, prepared once (they run for every batch of messages). */
  private attemptSql?: {
    begin: Database.Statement;
    bump: Database.Statement;
    get: Database.Statement;
    del: Database.Statement;
    add: Database.Statement;
  };
  /** First attempts of a store on disk (./attempts-journal.ts); undefined in memory, or until the first count. */
  private attemptsJournal: AttemptsJournal | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
    /** Parse-attempt writes commit without syncing the WAL (./light.ts). */
    private readonly writes: LightWrites,
  ) {}

  /** One statement for a whole call's keys (a JSON array): one trip into SQLite, not one per message. */
  private get sql(): NonNullable<SqliteControls['attemptSql']> {
    return (this.attemptSql ??= {
      begin: statement(
        this.db,
        `INSERT INTO parse_attempts (route, key, attempts, updated_at) SELECT ?, value, 1, ? FROM json_each(?) WHERE true
         ON CONFLICT (route, key) DO NOTHING RETURNING key`,
      ),
      bump: statement(
        this.db,
        `INSERT INTO parse_attempts (route, key, attempts, updated_at) SELECT ?, value, 1, ? FROM json_each(?) WHERE true
         ON CONFLICT (route, key) DO UPDATE SET attempts = parse_attempts.attempts + 1, updated_at = excluded.updated_at
         RETURNING key, attempts`,
      ),
      get: statement(this.db, 'SELECT key, attempts FROM parse_attempts WHERE route = ? AND key IN (SELECT value FROM json_each(?))'),
      del: statement(this.db, 'DELETE FROM parse_attempts WHERE route = ? AND key IN (SELECT value FROM json_each(?))'),
      add: statement(
        this.db,
        `INSERT INTO parse_attempts (route, key, attempts, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (route, key) DO UPDATE SET attempts = parse_attempts.attempts + excluded.attempts, updated_at = excluded.updated_at`,
      ),
    });
  }

  /**
   * Runs a parse-attempt write as one light transaction (./light.ts): a count must outlive the
   * process, which the operating system's page cache does; a power cut that loses it only gives a
   * message one more attempt.
   */
  private light<T>(write: () => T): T {
    return this.writes.run(this.db.transaction(write));
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  pauseRoute(p: RoutePauseRow): void {
    statement(
      this.db,
      `INSERT INTO route_pauses (route, target, code, message, since, until, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (route) DO UPDATE SET target = excluded.target, code = excluded.code, message = excluded.message,
           since = excluded.since, until = excluded.until, updated_at = excluded.updated_at`,
    ).run(p.route, p.target, p.code, p.message, p.since, p.until, this.iso());
  }

  resumeRoute(route: string): boolean {
    return statement(this.db, 'DELETE FROM route_pauses WHERE route = ?').run(route).changes > 0;
  }

  listRoutePauses(): RoutePauseRow[] {
    return statement(
      this.db,
      'SELECT route, target, code, message, since, until FROM route_pauses ORDER BY route',
    ).all() as RoutePauseRow[];
  }

  mailboxState(mailbox: string): MailboxStateRow | undefined {
    const m = statement(this.db, 'SELECT * FROM mailbox_states WHERE mailbox = ?').all(mailbox) as MailboxRowIn[];
    const f = statement(this.db, 'SELECT * FROM folder_states WHERE mailbox = ? ORDER BY folder').all(mailbox) as FolderRowIn[];
    return mailboxRows(m, f)[0];
  }

  listMailboxStates(): MailboxStateRow[] {
    const m = statement(this.db, 'SELECT * FROM mailbox_states').all() as MailboxRowIn[];
    const f = statement(this.db, 'SELECT * FROM folder_states ORDER BY mailbox, folder').all() as FolderRowIn[];
    return mailboxRows(m, f);
  }

  putMailboxState(mailbox: string, state: MailboxStateInput): void {
    this.db
      .transaction(() => {
        const prev = statement(this.db, 'SELECT * FROM mailbox_states WHERE mailbox = ?').get(mailbox) as MailboxRowIn | undefined;
        const r = mergeMailboxState(prev, state);
        statement(
          this.db,
          `INSERT INTO mailbox_states (mailbox, enabled, reason, error_kind, error_code, error_message, by_command, failing_since, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (mailbox) DO UPDATE SET enabled = excluded.enabled, reason = excluded.reason, error_kind = excluded.error_kind,
               error_code = excluded.error_code, error_message = excluded.error_message, by_command = excluded.by_command,
               failing_since = excluded.failing_since, updated_at = excluded.updated_at`,
        ).run(
          mailbox,
          r.enabled ? 1 : 0,
          r.reason,
          r.error_kind,
          r.error_code,
          r.error_message,
          r.by_command ? 1 : 0,
          r.failing_since,
          this.iso(),
        );
      })
      .immediate();
  }

  putFolderState(mailbox: string, folder: string, s: FolderStateInput): void {
    statement(
      this.db,
      `INSERT INTO folder_states (mailbox, folder, state, synced_until, last_synced, behind, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (mailbox, folder) DO UPDATE SET state = excluded.state,
           synced_until = COALESCE(excluded.synced_until, folder_states.synced_until),
           last_synced = COALESCE(excluded.last_synced, folder_states.last_synced),
           behind = excluded.behind, updated_at = excluded.updated_at`,
    ).run(mailbox, folder, s.state, s.syncedUntil ?? null, s.lastSynced ?? null, s.behind ?? null, this.iso());
  }

  /**
   * The journal of a store on disk, opened on the first count: the attempts that processes no
   * longer running left in theirs are first added to the table (one write).
   */
  private journal(): AttemptsJournal | undefined {
    // Closed: the table's statements then fail as any other write does.
    if (this.db.memory || !this.db.open) return undefined;
    if (this.attemptsJournal !== undefined) return this.attemptsJournal;
    const journal = journalOf(this.db.name);
    this.attemptsJournal = journal;
    const orphans = journal.takeOrphans();
    if (orphans !== undefined && orphans.counts.size > 0) this.addCounts(orphans.counts);
    orphans?.done();
    return journal;
  }

  private addCounts(counts: Counts): void {
    const { add } = this.sql;
    const at = this.iso();
    this.light(() => {
      for (const [route, byKey] of counts) for (const [key, n] of byKey) add.run(route, key, n, at);
    });
  }

  countParseAttempts(route: string, keys: readonly string[]): Map<string, number> {
    if (keys.length === 0) return new Map();
    const { bump, add } = this.sql;
    const at = this.iso();
    const journal = this.journal();
    // A first attempt in the journal moves to the table with this one (its end written first: a
    // crash between the two loses that attempt rather than counting it twice).
    const moved = journal === undefined ? [] : keys.filter((k, i) => journal.isLive(route, k) && keys.indexOf(k) === i);
    if (moved.length > 0) journal!.end(route, moved);
    const rows = this.light(() => {
      for (const key of moved) add.run(route, key, 1, at);
      return bump.all(route, at, JSON.stringify(keys)) as Array<{ key: string; attempts: number }>;
    });
    return new Map(rows.map((r) => [r.key, r.attempts]));
  }

  beginParseAttempts(route: string, keys: readonly string[]): Set<string> {
    if (keys.length === 0) return new Set();
    const journal = this.journal();
    if (journal === undefined) {
      const { begin } = this.sql;
      const at = this.iso();
      const rows = this.light(() => begin.all(route, at, JSON.stringify(keys)) as Array<{ key: string }>);
      return new Set(rows.map((r) => r.key));
    }
    const counted = this.parseAttempts(route, keys);
    const fresh = new Set(keys.filter((k) => !counted.has(k)));
    journal.begin(route, [...fresh]);
    return fresh;
  }

  parseAttempts(route: string, keys: readonly string[]): Map<string, number> {
    if (keys.length === 0) return new Map();
    const rows = this.sql.get.all(route, JSON.stringify(keys)) as Array<{ key: string; attempts: number }>;
    const out = new Map(rows.map((r) => [r.key, r.attempts]));
    const journal = this.journal();
    if (journal !== undefined) for (const key of keys) if (journal.isLive(route, key)) out.set(key, (out.get(key) ?? 0) + 1);
    return out;
  }

  clearParseAttempts(route: string, keys: readonly string[]): void {
    if (keys.length === 0) return;
    const journal = this.journal();
    // First attempts end in the journal; a key counted in the table (again) needs its row deleted.
    const counted = journal === undefined ? keys : journal.end(route, keys);
    if (counted.length === 0) return;
    const { del } = this.sql;
    this.light(() => del.run(route, JSON.stringify(counted)));
  }

  /** Lets go of the journal (the store is closing). */
  close(): void {
    this.attemptsJournal?.release();
    this.attemptsJournal = undefined;
  }

  countFiltered(mailbox: string, folder: string, n: number): void {
    statement(
      this.db,
      `INSERT INTO folder_states (mailbox, folder, filtered, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (mailbox, folder) DO UPDATE SET filtered = folder_states.filtered + excluded.filtered, updated_at = excluded.updated_at`,
    ).run(mailbox, folder, checkFilteredCount(n), this.iso());
  }
}
