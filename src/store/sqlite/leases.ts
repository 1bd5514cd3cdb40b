/**
 * SQLite mailbox leases with fencing tokens. A lease row is kept once created (a release only
 * ends it), so its token only grows: each grant to an owner that did not hold it live is a new
 * token, and a write that carries an older one is refused (`checkFence`, inside the writer's
 * transaction). Times are ms since the epoch by the store's clock.
 */
import type Database from 'better-sqlite3';
import { statement } from './statements.js';
import { checkDelay, fenced, leaseLost } from '../common.js';
import type { Backend } from '../compose.js';
import type { Fence, Lease, LeaseStore } from '../types.js';

interface LeaseRow {
  name: string;
  owner: string;
  expires_at: number;
  token: number;
}

const toLease = (r: LeaseRow): Lease => ({ name: r.name, owner: r.owner, expiresAt: new Date(r.expires_at).toISOString(), token: r.token });

export class SqliteLeases implements Backend<LeaseStore> {
  private readonly fenceStmt: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {
    this.fenceStmt = db.prepare('SELECT 1 FROM leases WHERE name = ? AND owner = ? AND token = ? AND expires_at > ?');
  }

  acquireLease(name: string, owner: string, ttlMs: number): Lease | undefined {
    const now = this.now();
    // A new token unless `owner` holds the lease live already (then it is only extended).
    const row = statement(
      this.db,
      `INSERT INTO leases (name, owner, expires_at, token) VALUES (@name, @owner, @until, 1)
         ON CONFLICT (name) DO UPDATE SET
           token = CASE WHEN leases.owner = excluded.owner AND leases.expires_at > @now THEN leases.token ELSE leases.token + 1 END,
           owner = excluded.owner, expires_at = excluded.expires_at
         WHERE leases.owner = excluded.owner OR leases.expires_at <= @now
         RETURNING name, owner, expires_at, token`,
    ).get({ name, owner, now, until: now + checkDelay('ttlMs', ttlMs, 1) }) as LeaseRow | undefined;
    return row === undefined ? undefined : toLease(row);
  }

  renewLease(name: string, owner: string, ttlMs: number): void {
    const now = this.now();
    const until = now + checkDelay('ttlMs', ttlMs, 1);
    const changed = statement(this.db, 'UPDATE leases SET expires_at = ? WHERE name = ? AND owner = ? AND expires_at > ?').run(
      until,
      name,
      owner,
      now,
    ).changes;
    if (changed === 0) throw leaseLost(name, owner, this.getLease(name)?.owner);
  }

  renewLeases(owner: string, ttlMs: number): Lease[] {
    const now = this.now();
    const until = now + checkDelay('ttlMs', ttlMs, 1);
    const rows = statement(
      this.db,
      'UPDATE leases SET expires_at = ? WHERE owner = ? AND expires_at > ? RETURNING name, owner, expires_at, token',
    ).all(until, owner, now) as LeaseRow[];
    return rows.map(toLease).sort((a, b) => a.name.localeCompare(b.name));
  }

  releaseLease(name: string, owner: string): boolean {
    const now = this.now();
    return (
      statement(this.db, 'UPDATE leases SET expires_at = 0 WHERE name = ? AND owner = ? AND expires_at > ?').run(name, owner, now)
        .changes === 1
    );
  }

  /** Ends every lease of these owners (inside the caller's transaction). */
  releaseOwners(list: string): void {
    statement(this.db, 'UPDATE leases SET expires_at = 0 WHERE owner IN (SELECT value FROM json_each(?)) AND expires_at > 0').run(list);
  }

  getLease(name: string): Lease | undefined {
    const row = statement(this.db, 'SELECT name, owner, expires_at, token FROM leases WHERE name = ? AND expires_at > ?').get(
      name,
      this.now(),
    ) as LeaseRow | undefined;
    return row === undefined ? undefined : toLease(row);
  }

  listLeases(): Lease[] {
    const rows = statement(this.db, 'SELECT name, owner, expires_at, token FROM leases WHERE expires_at > ? ORDER BY name').all(
      this.now(),
    ) as LeaseRow[];
    return rows.map(toLease);
  }

  /** Throws MAILGATE_ERR_STORE_FENCED unless `fence` names a lease its owner holds live with that token (call inside the write's transaction). */
  check(fence: Fence | undefined): void {
    if (fence === undefined) return;
    if (this.fenceStmt.get(fence.lease, fence.owner, fence.token, this.now()) === undefined) throw fenced(fence);
  }
}
