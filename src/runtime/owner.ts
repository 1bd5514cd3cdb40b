/**
 * This process as a registered owner of outbox claims: its identity (host, pid, process start
 * time), a heartbeat, and the reaper that takes back the claims of dead owners — at once for a
 * process of this host whose pid is gone (or now names another process), after `MISSED_BEATS`
 * heartbeat intervals for one elsewhere — so a restarted import or service claims them without
 * waiting out the lease. A host is a hostname and, on Linux, a PID namespace (`hostIdentity`):
 * a pid names a process only inside its namespace, and two containers may share a hostname.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Logger } from '../logger.js';
import type { OwnerInfo, OwnerRegistration, ReapResult, Store } from '../store/types.js';
import { pidExists } from '../pids.js';

/** Heartbeats an owner may miss before another process takes its claims back. */
export const MISSED_BEATS = 3;

/**
 * When process `pid` started (Linux: field 22 of /proc/<pid>/stat, clock ticks since boot),
 * or undefined where that is not known. The command name (field 2) may hold spaces and
 * parentheses, so fields are counted after its closing parenthesis.
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the name, field 3 (state) is at index 0: field 22 is at index 19.
    const start = fields[19];
    return start !== undefined && /^\d+$/.test(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

/**
 * This host as owners name it: `os.hostname()`, followed on Linux by the process's PID namespace
 * (` pidns:<inode>` of /proc/self/ns/pid). Processes in two containers that share a hostname
 * (host networking) are then of two hosts, and neither takes the other's pid, which names some
 * other process or none in its own namespace, for gone: each waits out the other's heartbeats.
 */
export function hostIdentity(): string {
  let ns: string;
  try {
    ns = readlinkSync('/proc/self/ns/pid');
  } catch {
    return hostname();
  }
  const inode = /^pid:\[(\d+)\]$/.exec(ns)?.[1];
  return inode === undefined ? hostname() : `${hostname()} pidns:${inode}`;
}

/**
 * An owner registered from this host whose process is gone: its pid does not exist, or it
 * exists but started at another time than the owner's process (the pid was reused).
 */
export function isGoneHere(owner: Pick<OwnerInfo, 'host' | 'pid' | 'procStart'>, host = hostIdentity()): boolean {
  if (owner.host !== host || owner.pid <= 0) return false;
  if (!pidExists(owner.pid)) return true;
  if (owner.procStart === undefined) return false;
  const now = processStart(owner.pid);
  return now !== undefined && now !== owner.procStart;
}

export interface OwnerHandle {
  /** Takes back the claims of dead owners (run at start and at every heartbeat). */
  reap(): Promise<ReapResult>;
  /** Stops taking mailbox leases: registered again without a group, so the other replicas take its share. */
  leaveGroup(): Promise<void>;
  /** Stops the heartbeat and deregisters, releasing what this process still holds. */
  stop(): Promise<void>;
}

export interface OwnerOptions {
  store: Store;
  id: string;
  heartbeatMs: number;
  logger: Logger;
  /** Processes that take mailbox leases: their group (runtime/ownership.ts). */
  group?: string;
}

/** Registers this process, reaps once, then heartbeats and reaps every `heartbeatMs` until stopped. */
export async function startOwner(options: OwnerOptions): Promise<OwnerHandle> {
  const { store, id, heartbeatMs, logger } = options;
  const host = hostIdentity();
  const procStart = processStart(process.pid);
  const registration: OwnerRegistration = {
    id,
    host,
    pid: process.pid,
    heartbeatMs,
    ...(procStart === undefined ? {} : { procStart }),
    ...(options.group === undefined ? {} : { group: options.group }),
  };
  await store.registerOwner(registration);

  async function reap(): Promise<ReapResult> {
    const dead = (await store.listOwners()).filter((o) => o.id !== id && isGoneHere(o, host)).map((o) => o.id);
    const result = await store.reapOwners(dead, MISSED_BEATS);
    if (result.owners.length > 0) {
      const text = `released ${result.claims} claims of ${result.owners.length} stopped processes`;
      logger.info({ owners: result.owners, claims: result.claims }, text);
    }
    return result;
  }

  async function beat(): Promise<void> {
    // Reaped meanwhile (this process was paused past its heartbeats): register again.
    if (!(await store.heartbeatOwner(id))) await store.registerOwner(registration);
    await reap();
  }

  await reap();
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= beat()
      .catch((err: unknown) => logger.warn({ err }, 'owner heartbeat failed'))
      .finally(() => (running = undefined));
  }, heartbeatMs);
  timer.unref();
  return {
    reap,
    async leaveGroup() {
      if (registration.group === undefined) return;
      delete registration.group;
      await store.registerOwner(registration);
    },
    async stop() {
      clearInterval(timer);
      await running;
      await store.deregisterOwner(id);
    },
  };
}
