/**
 * Registered owners (processes that claim work) in SQLite: registration, heartbeat, and
 * taking back what a dead owner held. Times are ms since the epoch by the store's clock.
 */
import type Database from 'better-sqlite3';
import { statement } from './statements.js';
import { checkOwner, checkMissedBeats, ownerInfoOf, type OwnerRow } from '../common.js';
import type { Backend } from '../compose.js';
import type { OwnerInfo, OwnerRegistration, OwnerStore, ReapResult } from '../types.js';
import type { SqliteLeases } from './leases.js';

export class SqliteOwners implements Backend<OwnerStore> {
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
    private readonly leases: SqliteLeases,
  ) {}

  registerOwner(owner: OwnerRegistration): void {
    checkOwner(owner);
    const now = this.now();
    statement(
      this.db,
      `INSERT INTO owners (id, host, pid, proc_start, heartbeat_ms, lease_group, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, proc_start = excluded.proc_start,
         heartbeat_ms = excluded.heartbeat_ms, lease_group = excluded.lease_group, heartbeat_at = excluded.heartbeat_at`,
    ).run(owner.id, owner.host, owner.pid, owner.procStart ?? null, owner.heartbeatMs, owner.group ?? null, now, now);
  }

  heartbeatOwner(id: string): boolean {
    return statement(this.db, 'UPDATE owners SET heartbeat_at = ? WHERE id = ?').run(this.now(), id).changes === 1;
  }

  deregisterOwner(id: string): number {
    return this.db
      .transaction(() => {
        statement(this.db, 'DELETE FROM owners WHERE id = ?').run(id);
        return this.release([id]);
      })
      .immediate();
  }

  listOwners(): OwnerInfo[] {
    const now = this.now();
    const rows = statement(this.db, 'SELECT * FROM owners ORDER BY started_at, id').all() as Array<OwnerRow & { heartbeat_at: number }>;
    return rows.map((r) => ownerInfoOf(r, Math.max(0, now - r.heartbeat_at)));
  }

  reapOwners(dead: string[], missedBeats: number): ReapResult {
    checkMissedBeats(missedBeats);
    return this.db
      .transaction(() => {
        const rows = statement(
          this.db,
          `DELETE FROM owners WHERE id IN (SELECT value FROM json_each(?)) OR heartbeat_at + heartbeat_ms * ? <= ? RETURNING id`,
        ).all(JSON.stringify(dead), missedBeats, this.now()) as Array<{ id: string }>;
        const owners = rows.map((r) => r.id).sort();
        return { owners, claims: this.release(owners) };
      })
      .immediate();
  }

  /** Frees the claims and mailbox leases of these owners (inside the caller's transaction). */
  private release(owners: string[]): number {
    if (owners.length === 0) return 0;
    const list = JSON.stringify(owners);
    this.leases.releaseOwners(list);
    return statement(
      this.db,
      `UPDATE outbox SET lease_owner = NULL, lease_expires_at = NULL
       WHERE status = 'queued' AND lease_owner IN (SELECT value FROM json_each(?))`,
    ).run(list).changes;
  }
}
