/**
 * Mailbox ownership across replicas that share a store (DESIGN.md "Scale-out"). Every pull
 * adapter — an IMAP account, a files drop — runs under a lease named `<kind>:<name>` on exactly
 * one live replica. The replicas of one configuration form a group (a digest of those lease
 * names, kept with their owner registration); each lease goes to the live member that rendezvous
 * hashing prefers, so mailboxes spread evenly and only the share of a replica that comes or goes
 * moves. Every `renewMs` this process renews all its leases in one statement, stops the adapters
 * whose lease it lost, hands over those another member is now preferred for (stop, then release),
 * and takes the leases it is preferred for as they become free.
 *
 * The first check. A replica that, once registered, finds no other live member of its group takes
 * its leases at once (a lone replica starts reading without delay); one that finds others waits
 * `SETTLE_MS` first, so that replicas started together each take only their share. Two replicas
 * starting at the same instant cannot both find themselves alone: each registers (a committed
 * write) before it lists the members, so whichever lists second sees the other. At most one of a
 * group started together therefore skips the wait. It takes every mailbox, checks again after
 * `SETTLE_MS` instead of `renewMs`, and by then sees the others and hands their shares over (stop,
 * then release) about when they would have taken them anyway.
 *
 * An adapter runs on a sink that carries its lease's fencing token (`Fence`): if this process
 * lost the lease without knowing it (paused, cut off from the database), the store refuses its
 * writes, and the next check — due at once after such a refusal — stops the adapter.
 */
import { createHash } from 'node:crypto';
import { isGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RuntimeEvents } from '../pipeline/events.js';
import { sleep } from '../pipeline/sleep.js';
import type { Intake } from '../pipeline/types.js';
import type { Fence, Lease, OwnerInfo, Store } from '../store/types.js';
import { runOne, setState, type AdapterEntry } from './adapters.js';
import type { MailboxGuard } from './mailboxes.js';
import { MISSED_BEATS } from './owner.js';

/**
 * How long a replica that finds other live members of its group waits before it takes its first
 * leases (at most renewMs): replicas started together then each take only their share.
 */
export const SETTLE_MS = 1_000;

/** The lease a pull adapter runs under; push adapters (every replica serves them) have none. */
export function leaseName(e: Pick<AdapterEntry, 'kind' | 'name' | 'adapter'>): string | undefined {
  return e.adapter.mode === 'pull' ? `${e.kind}:${e.name}` : undefined;
}

/** The group of a process: a digest of the lease names it can serve (replicas of one configuration share it). */
export function leaseGroup(names: readonly string[]): string {
  return createHash('sha256')
    .update([...names].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
}

function score(owner: string, lease: string): Buffer {
  return createHash('sha256').update(owner).update('\0').update(lease).digest();
}

/** Rendezvous hashing: the member with the highest score for this lease (ties by id); undefined without members. */
export function preferredOwner(lease: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore: Buffer | undefined;
  for (const m of members) {
    const s = score(m, lease);
    const c = bestScore === undefined ? 1 : Buffer.compare(s, bestScore);
    if (c > 0 || (c === 0 && best !== undefined && m < best)) {
      best = m;
      bestScore = s;
    }
  }
  return best;
}

/** Live members of a group: registered with it and not past `MISSED_BEATS` of their heartbeat. */
export function liveMembers(owners: readonly OwnerInfo[], group: string): string[] {
  return owners.filter((o) => o.group === group && o.heartbeatAgeMs < o.heartbeatMs * MISSED_BEATS).map((o) => o.id);
}

export interface OwnershipOptions {
  store: Store;
  /** This process's owner string (its outbox claims and leases). */
  owner: string;
  group: string;
  ttlMs: number;
  renewMs: number;
  logger: Logger;
  /** Where the adapters' state changes go (`adapter:state`). */
  events?: RuntimeEvents;
  /** Mailbox states: a leased mailbox runs only while it is enabled. */
  mailboxes?: MailboxGuard;
  /** The wait before the first check when other members are registered. Default `SETTLE_MS`; at most renewMs. */
  settleMs?: number;
}

interface Run {
  entry: AdapterEntry;
  fence: Fence;
  controller: AbortController;
  done: Promise<void>;
  /** Set once this process decided to stop it (lease lost or handed over). */
  stopping: boolean;
}

export class Ownership {
  private readonly runs = new Map<string, Run>();
  /** Leases handed over or lost whose adapter has not stopped yet: not taken again meanwhile. */
  private readonly stopping = new Map<string, Promise<void>>();
  private wake: AbortController | undefined;
  private readonly log: Logger;
  private lastMembers = '';

  constructor(
    private readonly entries: readonly AdapterEntry[],
    private readonly opts: OwnershipOptions,
  ) {
    this.log = opts.logger.child({ component: 'ownership' });
    for (const e of entries) setState(e, 'standby', opts.events);
  }

  /**
   * Checks leases every `renewMs` until `signal` aborts; then stops every adapter it runs and
   * releases their leases at once (the other replicas take them at their next check).
   */
  async run(sink: Intake, signal: AbortSignal, beforeStop?: Promise<void>): Promise<void> {
    let next = await this.settle(signal);
    while (!signal.aborted) {
      try {
        await this.check(sink);
      } catch (err) {
        this.log.warn({ err }, 'mailbox lease check failed; retrying');
      }
      this.wake = new AbortController();
      await sleep(next, AbortSignal.any([signal, this.wake.signal]));
      next = this.opts.renewMs;
    }
    await beforeStop;
    await this.stopAll();
  }

  /**
   * Before the first check (see the rule at the top): waits `settleMs` when another live member
   * of the group is registered, or when the members cannot be read. Answers the delay before the
   * second check: `settleMs` after a check made at once, so a replica that registered just after
   * this one looked is seen within the same wait; `renewMs` otherwise.
   */
  private async settle(signal: AbortSignal): Promise<number> {
    const { store, owner, group, renewMs } = this.opts;
    const settleMs = Math.min(renewMs, this.opts.settleMs ?? SETTLE_MS);
    let others: string[] | undefined;
    try {
      others = liveMembers(await store.listOwners(), group).filter((id) => id !== owner);
    } catch (err) {
      this.log.warn({ err }, 'listing the replicas failed; waiting before taking leases');
    }
    if (others?.length === 0) {
      this.log.info('no other replica of this configuration is registered: taking mailbox leases at once');
      return settleMs;
    }
    this.log.info({ replicas: others }, `other replicas are registered: taking mailbox leases after ${settleMs} ms`);
    await sleep(settleMs, signal);
    return renewMs;
  }

  /** A write was refused for a stale token: check the leases now rather than at the next tick. */
  private poke(): void {
    this.wake?.abort();
  }

  private async check(sink: Intake): Promise<void> {
    const { store, owner, ttlMs, group } = this.opts;
    const held = new Map((await store.renewLeases(owner, ttlMs)).map((l) => [l.name, l]));
    for (const [name, run] of this.runs) {
      if (held.get(name)?.token === run.fence.token) continue;
      this.log.warn({ lease: name, token: run.fence.token }, `lease ${name} lost: stopping its adapter (another replica holds it now)`);
      this.stop(name, run, false);
    }
    const owners = await store.listOwners();
    // Reaped while paused (not registered until the next heartbeat): take nothing meanwhile.
    if (!owners.some((o) => o.id === owner && o.group === group)) return;
    const members = liveMembers(owners, group);
    this.noteMembers(members);
    for (const entry of this.entries) {
      const name = leaseName(entry)!;
      const mine = preferredOwner(name, members) === owner;
      const run = this.runs.get(name);
      if (run !== undefined && !mine) {
        this.log.info({ lease: name, to: preferredOwner(name, members) }, `handing lease ${name} over`);
        this.stop(name, run, true);
      } else if (run === undefined && mine && !this.stopping.has(name)) {
        const lease = await store.acquireLease(name, owner, ttlMs);
        if (lease !== undefined) this.start(entry, lease, sink);
      }
    }
  }

  private noteMembers(members: string[]): void {
    const key = [...members].sort().join(',');
    if (key === this.lastMembers) return;
    this.lastMembers = key;
    this.log.info({ members: members.length, replicas: [...members].sort() }, `${members.length} live replicas share the mailboxes`);
  }

  private start(entry: AdapterEntry, lease: Lease, base: Intake): void {
    const fence: Fence = { lease: lease.name, owner: this.opts.owner, token: lease.token };
    const controller = new AbortController();
    const sink = this.fencedSink(base, fence);
    const run: Run = { entry, fence, controller, stopping: false, done: Promise.resolve() };
    run.done = runOne(entry, sink, controller.signal, this.opts).then(() => {
      if (run.stopping) setState(entry, 'standby', this.opts.events);
    });
    this.runs.set(lease.name, run);
    this.log.info({ lease: lease.name, token: lease.token }, `took lease ${lease.name}`);
  }

  /** The adapter's sink: every write carries the fence; a refused one (stale token) wakes the check loop at once. */
  private fencedSink(sink: Intake, fence: Fence): Intake {
    const onError = (err: unknown): never => {
      if (isGatewayError(err) && err.code === 'MAILGATE_ERR_STORE_FENCED') this.poke();
      throw err;
    };
    return {
      ...(sink.filtered ? { filtered: sink.filtered.bind(sink) } : {}),
      checkpoint: (key) => sink.checkpoint(key),
      item: (id) => sink.item(id),
      accept: (batch, options) => sink.accept(batch, { ...options, fence }).catch(onError),
    };
  }

  /** Stops an adapter; a handed-over lease is released once it has stopped. */
  private stop(name: string, run: Run, release: boolean): void {
    run.stopping = true;
    this.runs.delete(name);
    run.controller.abort();
    const done = run.done
      .then(async () => {
        if (release) await this.opts.store.releaseLease(name, this.opts.owner);
      })
      .catch((err: unknown) => this.log.warn({ err, lease: name }, 'releasing a lease failed (it expires by itself)'))
      .finally(() => this.stopping.delete(name));
    this.stopping.set(name, done);
  }

  private async stopAll(): Promise<void> {
    for (const [name, run] of [...this.runs]) this.stop(name, run, true);
    await Promise.all(this.stopping.values());
  }
}
