/**
 * Registered owners (processes that claim work) in PostgreSQL: registration, heartbeat, and
 * taking back what a dead owner held. Times are the server's clock unless a test clock is given,
 * so replicas with skewed clocks agree on whose heartbeat stopped.
 */
import type pg from 'pg';
import { checkMissedBeats, checkOwner, ownerInfoOf, type OwnerRow } from '../common.js';
import type { Backend } from '../compose.js';
import type { OwnerInfo, OwnerRegistration, OwnerStore, ReapResult } from '../types.js';
import { releaseOwnerLeases } from './leases.js';
import { nowParam, pgNow, withTransaction, type PgClock, type Queryable } from './db.js';

/** Frees the claims and mailbox leases of these owners; returns how many claims. */
async function release(db: Queryable, owners: string[]): Promise<number> {
  if (owners.length === 0) return 0;
  await releaseOwnerLeases(db, owners);
  // The items the owners' registered claims name (each claim or renewal registered its ids), of
  // those the ones they still hold: exact, and reading only what these owners claimed.
  const { rows } = await db.query<{ n: string }>(
    `WITH u AS (
       UPDATE outbox SET lease_owner = NULL, lease_expires_at = NULL
       WHERE id IN (SELECT unnest(ids) FROM outbox_claims WHERE owner = ANY($1::text[]))
         AND status = 'queued' AND lease_owner = ANY($1::text[]) RETURNING id),
     gone AS (DELETE FROM outbox_claims WHERE owner = ANY($1::text[]))
     SELECT COUNT(*) AS n FROM u`,
    [owners],
  );
  return Number(rows[0]?.n ?? 0);
}

export class PgOwners implements Backend<OwnerStore> {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: PgClock,
  ) {}

  async registerOwner(owner: OwnerRegistration): Promise<void> {
    checkOwner(owner);
    await this.pool.query(
      `INSERT INTO owners (id, host, pid, proc_start, heartbeat_ms, lease_group, started_at, heartbeat_at)
       VALUES ($1, $2, $3, $4, $5, $6, ${pgNow(7)}, ${pgNow(7)})
       ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, proc_start = excluded.proc_start,
         heartbeat_ms = excluded.heartbeat_ms, lease_group = excluded.lease_group, heartbeat_at = excluded.heartbeat_at`,
      [owner.id, owner.host, owner.pid, owner.procStart ?? null, owner.heartbeatMs, owner.group ?? null, nowParam(this.clock)],
    );
  }

  async heartbeatOwner(id: string): Promise<boolean> {
    const res = await this.pool.query(`UPDATE owners SET heartbeat_at = ${pgNow(2)} WHERE id = $1`, [id, nowParam(this.clock)]);
    return res.rowCount === 1;
  }

  deregisterOwner(id: string): Promise<number> {
    return withTransaction(this.pool, async (client) => {
      await client.query('DELETE FROM owners WHERE id = $1', [id]);
      return release(client, [id]);
    });
  }

  async listOwners(): Promise<OwnerInfo[]> {
    const { rows } = await this.pool.query<OwnerRow & { age_ms: string | number }>(
      `SELECT id, host, pid, proc_start, heartbeat_ms, lease_group, started_at, heartbeat_at,
         GREATEST(0, FLOOR(EXTRACT(EPOCH FROM (${pgNow(1)} - heartbeat_at)) * 1000)) AS age_ms
       FROM owners ORDER BY started_at, id`,
      [nowParam(this.clock)],
    );
    return rows.map((r) => ownerInfoOf(r, Number(r.age_ms)));
  }

  reapOwners(dead: string[], missedBeats: number): Promise<ReapResult> {
    checkMissedBeats(missedBeats);
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: string }>(
        `DELETE FROM owners WHERE id = ANY($1::text[])
           OR heartbeat_at + heartbeat_ms * $2 * interval '1 millisecond' <= ${pgNow(3)} RETURNING id`,
        [dead, missedBeats, nowParam(this.clock)],
      );
      const owners = rows.map((r) => r.id).sort();
      return { owners, claims: await release(client, owners) };
    });
  }
}
