/**
 * Ownership: the processes that claim work (owners, with heartbeats), the mailbox leases with
 * their fencing tokens, and the checkpoints those leases protect (DESIGN.md "State").
 */
import type { Checkpoint } from '../../model/origin.js';

export interface Lease {
  name: string;
  owner: string;
  expiresAt: string;
  /**
   * Fencing token: grows each time the lease is granted to an owner that did not hold it live.
   * Writes made under the lease carry it (`Fence`), and the store refuses an older one.
   */
  token: number;
}

/**
 * What a write made under a mailbox lease carries: the store checks, in the write's own
 * transaction, that `owner` still holds `lease` live with this `token`, and otherwise refuses
 * the whole write with MAILGATE_ERR_STORE_FENCED. A process that lost its lease without knowing
 * it (paused past its expiry, cut off from the database) can therefore never write over the
 * replica that holds it now.
 */
export interface Fence {
  lease: string;
  owner: string;
  token: number;
}

/** A process that claims work, as it registers itself (`registerOwner`). */
export interface OwnerRegistration {
  /** The owner string of its claims and leases, unique per process run. */
  id: string;
  /** `os.hostname()` of its machine: its pid means something only there. */
  host: string;
  pid: number;
  /**
   * When the process started, as the operating system tells it (Linux: field 22 of
   * `/proc/<pid>/stat`), to tell a reused pid from the owner's; absent where unknown.
   */
  procStart?: string;
  /** How often it renews its heartbeat, in ms: it counts as dead after missing a few. */
  heartbeatMs: number;
  /**
   * Set by processes that take mailbox leases (`mailgate serve`): a digest of the lease names
   * they can serve. Mailboxes are spread over the live owners of the same group.
   */
  group?: string;
}

/** A registered owner (`listOwners`). */
export interface OwnerInfo extends OwnerRegistration {
  startedAt: string;
  heartbeatAt: string;
  /** How long ago its last heartbeat was, by the store's clock, in ms. */
  heartbeatAgeMs: number;
}

/** What `reapOwners` took back. */
export interface ReapResult {
  /** The owners removed. */
  owners: string[];
  /** Queued items their claims held, now claimable at once. */
  claims: number;
}

export interface LeaseStore {
  /**
   * Takes the lease when free, expired, or already held by `owner` (then extends it, same token);
   * answers the lease granted, or undefined when another owner holds it.
   */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<Lease | undefined>;
  /** Extends a lease `owner` still holds live; throws MAILGATE_ERR_STORE_LEASE_LOST when it expired or another owner took it. */
  renewLease(name: string, owner: string, ttlMs: number): Promise<void>;
  /** Extends every lease `owner` holds live, in one statement, and answers them (a lease missing from the answer is lost). */
  renewLeases(owner: string, ttlMs: number): Promise<Lease[]>;
  /** Gives the lease up if `owner` holds it (its token is kept: the next grant gets a greater one). */
  releaseLease(name: string, owner: string): Promise<boolean>;
  /** The lease while someone holds it live. */
  getLease(name: string): Promise<Lease | undefined>;
  /** Every lease held live, by name. */
  listLeases(): Promise<Lease[]>;
}

export interface OwnerStore {
  /** Registers (or registers again) a process; its heartbeat counts from now. */
  registerOwner(owner: OwnerRegistration): Promise<void>;
  /** Renews the heartbeat; false when the owner is not registered (it was reaped: register again). */
  heartbeatOwner(id: string): Promise<boolean>;
  /** Removes the owner and releases the claims it still holds (clean shutdown); returns how many claims. */
  deregisterOwner(id: string): Promise<number>;
  /** Registered owners, oldest first. */
  listOwners(): Promise<OwnerInfo[]>;
  /**
   * Removes the owners named in `dead` (a caller on their host saw their process gone) and every
   * owner whose last heartbeat is older than `missedBeats` of its own heartbeat intervals, in one
   * transaction with their claims: the queued items they held become claimable at once, and
   * their mailbox leases are released.
   */
  reapOwners(dead: string[], missedBeats: number): Promise<ReapResult>;
}

/** An adapter's cursors (written with the items they cover by `enqueue`, or alone here). */
export interface CheckpointStore {
  getCheckpoint(key: string): Promise<Checkpoint['value'] | undefined>;
  /** For adapters that advance without messages; otherwise pass the checkpoint to enqueue. Fenced as `enqueue`. */
  setCheckpoint(key: string, value: Checkpoint['value'], fence?: Fence): Promise<void>;
  listCheckpoints(): Promise<Array<Checkpoint & { updatedAt: string }>>;
}
