/**
 * PostgreSQL mailbox leases with fencing tokens. A lease row is kept once created (a release
 * only ends it), so its token only grows: each grant to an owner that did not hold it live is a
 * new token. A write under a lease checks its token first in its own transaction with
 * `FOR SHARE`, so a concurrent grant to another owner waits for that write to commit, and a write
 * that comes after the grant finds the new token and is refused. Times are the server's clock
 * unless a test clock is given.
 */
import type pg from 'pg';
import { checkDelay, fenced, leaseLost } from '../common.js';
import type { Backend } from '../compose.js';
import type { Fence, Lease, LeaseStore } from '../types.js';
import { iso, nowParam, pgNow, type PgClock, type Queryable } from './db.js';

interface LeaseRow {
  name: string;
  owner: string;
  expires_at: Date;
  token: string | number;
}

const toLease = (r: LeaseRow): Lease => ({ name: r.name, owner: r.owner, expiresAt: iso(r.expires_at), token: Number(r.token) });
const COLUMNS = 'name, owner, expires_at, token';

export class PgLeases implements Backend<LeaseStore> {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: PgClock,
  ) {}

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<Lease | undefined> {
    // A new token unless `owner` holds the lease live already (then it is only extended).
    const { rows } = await this.pool.query<LeaseRow>(
      `INSERT INTO leases (name, owner, expires_at, token) VALUES ($1, $2, ${pgNow(4)} + $3 * interval '1 millisecond', 1)
       ON CONFLICT (name) DO UPDATE SET
         token = CASE WHEN leases.owner = excluded.owner AND leases.expires_at > ${pgNow(4)} THEN leases.token ELSE leases.token + 1 END,
         owner = excluded.owner, expires_at = excluded.expires_at
       WHERE leases.owner = excluded.owner OR leases.expires_at <= ${pgNow(4)}
       RETURNING ${COLUMNS}`,
      [name, owner, checkDelay('ttlMs', ttlMs, 1), nowParam(this.clock)],
    );
    return rows[0] === undefined ? undefined : toLease(rows[0]);
  }

  async renewLease(name: string, owner: string, ttlMs: number): Promise<void> {
    const res = await this.pool.query(
      `UPDATE leases SET expires_at = ${pgNow(4)} + $3 * interval '1 millisecond'
       WHERE name = $1 AND owner = $2 AND expires_at > ${pgNow(4)}`,
      [name, owner, checkDelay('ttlMs', ttlMs, 1), nowParam(this.clock)],
    );
    if (res.rowCount !== 1) throw leaseLost(name, owner, (await this.getLease(name))?.owner);
  }

  async renewLeases(owner: string, ttlMs: number): Promise<Lease[]> {
    const { rows } = await this.pool.query<LeaseRow>(
      `UPDATE leases SET expires_at = ${pgNow(3)} + $2 * interval '1 millisecond'
       WHERE owner = $1 AND expires_at > ${pgNow(3)} RETURNING ${COLUMNS}`,
      [owner, checkDelay('ttlMs', ttlMs, 1), nowParam(this.clock)],
    );
    return rows.map(toLease).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async releaseLease(name: string, owner: string): Promise<boolean> {
    const res = await this.pool.query(
      `UPDATE leases SET expires_at = 'epoch' WHERE name = $1 AND owner = $2 AND expires_at > ${pgNow(3)}`,
      [name, owner, nowParam(this.clock)],
    );
    return res.rowCount === 1;
  }

  async getLease(name: string): Promise<Lease | undefined> {
    const { rows } = await this.pool.query<LeaseRow>(`SELECT ${COLUMNS} FROM leases WHERE name = $1 AND expires_at > ${pgNow(2)}`, [
      name,
      nowParam(this.clock),
    ]);
    return rows[0] === undefined ? undefined : toLease(rows[0]);
  }

  async listLeases(): Promise<Lease[]> {
    const { rows } = await this.pool.query<LeaseRow>(`SELECT ${COLUMNS} FROM leases WHERE expires_at > ${pgNow(1)} ORDER BY name`, [
      nowParam(this.clock),
    ]);
    return rows.map(toLease);
  }

  /** Throws MAILGATE_ERR_STORE_FENCED unless `fence` names a lease its owner holds live with that token (first in the write's transaction). */
  async check(db: Queryable, fence: Fence | undefined): Promise<void> {
    if (fence === undefined) return;
    const res = await db.query(
      `SELECT 1 FROM leases WHERE name = $1 AND owner = $2 AND token = $3 AND expires_at > ${pgNow(4)} FOR SHARE`,
      [fence.lease, fence.owner, fence.token, nowParam(this.clock)],
    );
    if (res.rowCount !== 1) throw fenced(fence);
  }
}

/** Ends every lease of these owners (inside the caller's transaction). */
export async function releaseOwnerLeases(db: Queryable, owners: string[]): Promise<void> {
  await db.query(`UPDATE leases SET expires_at = 'epoch' WHERE owner = ANY($1::text[]) AND expires_at > 'epoch'`, [owners]);
}
