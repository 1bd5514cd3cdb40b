/** PostgreSQL controls: route pauses, mailbox states and folder sync states (src/store/contract/controls.ts). */
import type pg from 'pg';
import type { Backend } from '../compose.js';
import { checkFilteredCount, mailboxRows, mergeMailboxState, type FolderRowIn, type MailboxRowIn } from '../controls-rows.js';
import type { ControlStore, FolderStateInput, MailboxStateInput, MailboxStateRow, RoutePauseRow } from '../types.js';
import { iso, nowParam, pgArray, pgNow, withTransaction, type PgClock } from './db.js';

type Timed<T> = Omit<T, 'updated_at'> & { updated_at: Date };
const timed = <T>(r: Timed<T>): T => ({ ...r, updated_at: iso(r.updated_at) }) as T;

/**
 * Makes the statement's own transaction commit without waiting for the WAL flush
 * (synchronous_commit off, for it alone): parse-attempt counts must outlive the gateway's
 * process, which they do once the server has them; a server crash that loses one only gives a
 * message one more attempt. The statement joins `light` so that the setting is evaluated.
 */
export const ASYNC_COMMIT = "WITH light AS (SELECT set_config('synchronous_commit', 'off', true))";

export class PgControls implements Backend<ControlStore> {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: PgClock,
  ) {}

  async pauseRoute(p: RoutePauseRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO route_pauses (route, target, code, message, since, until, updated_at) VALUES ($1, $2, $3, $4, $5, $6, ${pgNow(7)})
       ON CONFLICT (route) DO UPDATE SET target = excluded.target, code = excluded.code, message = excluded.message,
         since = excluded.since, until = excluded.until, updated_at = excluded.updated_at`,
      [p.route, p.target, p.code, p.message, p.since, p.until, nowParam(this.clock)],
    );
  }

  async resumeRoute(route: string): Promise<boolean> {
    const res = await this.pool.query('DELETE FROM route_pauses WHERE route = $1', [route]);
    return (res.rowCount ?? 0) > 0;
  }

  async listRoutePauses(): Promise<RoutePauseRow[]> {
    const { rows } = await this.pool.query<RoutePauseRow>(
      'SELECT route, target, code, message, since, until FROM route_pauses ORDER BY route',
    );
    return rows;
  }

  async mailboxState(mailbox: string): Promise<MailboxStateRow | undefined> {
    const m = await this.pool.query<Timed<MailboxRowIn>>('SELECT * FROM mailbox_states WHERE mailbox = $1', [mailbox]);
    const f = await this.pool.query<Timed<FolderRowIn>>('SELECT * FROM folder_states WHERE mailbox = $1 ORDER BY folder', [mailbox]);
    return mailboxRows(m.rows.map(timed<MailboxRowIn>), f.rows.map(timed<FolderRowIn>))[0];
  }

  async listMailboxStates(): Promise<MailboxStateRow[]> {
    const m = await this.pool.query<Timed<MailboxRowIn>>('SELECT * FROM mailbox_states');
    const f = await this.pool.query<Timed<FolderRowIn>>('SELECT * FROM folder_states ORDER BY mailbox, folder');
    return mailboxRows(m.rows.map(timed<MailboxRowIn>), f.rows.map(timed<FolderRowIn>));
  }

  putMailboxState(mailbox: string, state: MailboxStateInput): Promise<void> {
    return withTransaction(this.pool, async (client) => {
      // The row is locked (or, when new, the insert conflicts) so two writers merge in turn.
      const prev = await client.query<Timed<MailboxRowIn>>('SELECT * FROM mailbox_states WHERE mailbox = $1 FOR UPDATE', [mailbox]);
      const r = mergeMailboxState(prev.rows[0] === undefined ? undefined : timed<MailboxRowIn>(prev.rows[0]), state);
      await client.query(
        `INSERT INTO mailbox_states (mailbox, enabled, reason, error_kind, error_code, error_message, by_command, failing_since, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, ${pgNow(9)})
         ON CONFLICT (mailbox) DO UPDATE SET enabled = excluded.enabled, reason = excluded.reason, error_kind = excluded.error_kind,
           error_code = excluded.error_code, error_message = excluded.error_message, by_command = excluded.by_command,
           failing_since = excluded.failing_since, updated_at = excluded.updated_at`,
        [mailbox, r.enabled, r.reason, r.error_kind, r.error_code, r.error_message, r.by_command, r.failing_since, nowParam(this.clock)],
      );
    });
  }

  async putFolderState(mailbox: string, folder: string, s: FolderStateInput): Promise<void> {
    await this.pool.query(
      `INSERT INTO folder_states (mailbox, folder, state, synced_until, last_synced, behind, updated_at) VALUES ($1, $2, $3, $4, $5, $6, ${pgNow(7)})
       ON CONFLICT (mailbox, folder) DO UPDATE SET state = excluded.state,
         synced_until = COALESCE(excluded.synced_until, folder_states.synced_until),
         last_synced = COALESCE(excluded.last_synced, folder_states.last_synced),
         behind = excluded.behind, updated_at = excluded.updated_at`,
      [mailbox, folder, s.state, s.syncedUntil ?? null, s.lastSynced ?? null, s.behind ?? null, nowParam(this.clock)],
    );
  }

  async countParseAttempts(route: string, keys: readonly string[]): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const sorted = [...new Set(keys)].sort();
    const { rows } = await this.pool.query<{ key: string; attempts: number }>(
      `${ASYNC_COMMIT} INSERT INTO parse_attempts (route, key, attempts, updated_at)
       SELECT $1, k, 1, ${pgNow(3)} FROM unnest($2::text[]) AS k, light
       ON CONFLICT (route, key) DO UPDATE SET attempts = parse_attempts.attempts + 1, updated_at = excluded.updated_at
       RETURNING key, attempts`,
      [route, pgArray(sorted), nowParam(this.clock)],
    );
    return new Map(rows.map((r) => [r.key, Number(r.attempts)]));
  }

  async beginParseAttempts(route: string, keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const sorted = [...new Set(keys)].sort();
    // Answers the keys counted before (usually none) rather than a row for every key counted now.
    const { rows } = await this.pool.query<{ key: string }>(
      `${ASYNC_COMMIT}, ins AS (INSERT INTO parse_attempts (route, key, attempts, updated_at)
         SELECT $1, k, 1, ${pgNow(3)} FROM unnest($2::text[]) AS k, light
         ON CONFLICT (route, key) DO NOTHING RETURNING key)
       SELECT k AS key FROM unnest($2::text[]) AS k WHERE k NOT IN (SELECT key FROM ins)`,
      [route, pgArray(sorted), nowParam(this.clock)],
    );
    const before = new Set(rows.map((r) => r.key));
    return new Set(sorted.filter((k) => !before.has(k)));
  }

  async parseAttempts(route: string, keys: readonly string[]): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const { rows } = await this.pool.query<{ key: string; attempts: number }>(
      'SELECT key, attempts FROM parse_attempts WHERE route = $1 AND key = ANY($2::text[])',
      [route, pgArray(keys)],
    );
    return new Map(rows.map((r) => [r.key, Number(r.attempts)]));
  }

  async clearParseAttempts(route: string, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.pool.query(`${ASYNC_COMMIT} DELETE FROM parse_attempts USING light WHERE route = $1 AND key = ANY($2::text[])`, [
      route,
      pgArray(keys),
    ]);
  }

  async countFiltered(mailbox: string, folder: string, n: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO folder_states (mailbox, folder, filtered, updated_at) VALUES ($1, $2, $3, ${pgNow(4)})
       ON CONFLICT (mailbox, folder) DO UPDATE SET filtered = folder_states.filtered + excluded.filtered, updated_at = excluded.updated_at`,
      [mailbox, folder, checkFilteredCount(n), nowParam(this.clock)],
    );
  }
}
