/**
 * Mailbox ownership across replicas (src/runtime/ownership.ts): rendezvous hashing spreads
 * leases evenly and moves only a leaving member's share; two replicas on one real SQLite store
 * split the pull adapters between them, hand over at once when one stops, and a replica whose
 * lease was taken over stops its adapter while the store refuses its writes. A lone replica takes
 * its leases at once; one that finds another member waits first, and of replicas started at the
 * same instant at most one skips that wait.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { Adapter, Intake } from '../../src/pipeline/types.js';
import { entryOf, type AdapterEntry } from '../../src/runtime/adapters.js';
import { startOwner, type OwnerHandle } from '../../src/runtime/owner.js';
import { leaseGroup, leaseName, liveMembers, Ownership, preferredOwner, type OwnershipOptions } from '../../src/runtime/ownership.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import type { OwnerInfo } from '../../src/store/types.js';

const silent = createLogger({ level: 'silent' });

describe('rendezvous hashing', () => {
  const leases = Array.from({ length: 1_000 }, (_, i) => `imap:acct-${i}`);

  it('spreads 1,000 leases evenly over 3 members and moves only the leaving member’s share', () => {
    const three = ['gw-a', 'gw-b', 'gw-c'];
    const before = new Map(leases.map((l) => [l, preferredOwner(l, three)!]));
    const counts = three.map((m) => [...before.values()].filter((o) => o === m).length);
    for (const c of counts) expect(c).toBeGreaterThan(280);
    for (const c of counts) expect(c).toBeLessThan(390);
    const after = new Map(leases.map((l) => [l, preferredOwner(l, ['gw-a', 'gw-c'])!]));
    for (const l of leases) {
      if (before.get(l) !== 'gw-b') expect(after.get(l)).toBe(before.get(l));
      else expect(['gw-a', 'gw-c']).toContain(after.get(l));
    }
    expect(preferredOwner('imap:x', [])).toBeUndefined();
    // The order members are listed in does not matter.
    expect(leases.every((l) => preferredOwner(l, [...three].reverse()) === before.get(l))).toBe(true);
  });

  it('counts as members only owners of the group whose heartbeat is recent', () => {
    const o = (id: string, group: string | undefined, heartbeatAgeMs: number): OwnerInfo => ({
      id,
      host: 'h',
      pid: 1,
      heartbeatMs: 1_000,
      startedAt: '',
      heartbeatAt: '',
      heartbeatAgeMs,
      ...(group ? { group } : {}),
    });
    expect(liveMembers([o('a', 'g', 0), o('b', 'g', 2_999), o('c', 'g', 3_000), o('d', 'other', 0), o('e', undefined, 0)], 'g')).toEqual([
      'a',
      'b',
    ]);
    expect(leaseGroup(['imap:b', 'imap:a'])).toBe(leaseGroup(['imap:a', 'imap:b']));
    expect(leaseGroup(['imap:a'])).not.toBe(leaseGroup(['imap:a', 'imap:b']));
  });
});

/** A pull adapter that runs until its signal aborts, writing one checkpoint when it starts. */
class MailboxAdapter implements Adapter {
  readonly kind = 'imap';
  readonly mode = 'pull';
  running = false;
  writes: Array<Promise<unknown>> = [];
  private sink: Intake | undefined;
  constructor(readonly name: string) {}
  async start(sink: Intake, signal: AbortSignal): Promise<void> {
    this.running = true;
    this.sink = sink;
    try {
      await sink.accept([], { checkpoint: { key: `imap:${this.name}:INBOX`, value: { lastUid: 1 } } });
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    } finally {
      this.running = false;
    }
  }
  /** A write made now on the sink of the last run (stale if the lease moved meanwhile). */
  async write(uid: number): Promise<void> {
    await this.sink!.accept([], { checkpoint: { key: `imap:${this.name}:INBOX`, value: { lastUid: uid } } });
  }
}

interface Replica {
  id: string;
  /** The store methods its Ownership called, in order. */
  calls: string[];
  /** The messages its Ownership logged, in order. */
  logs: string[];
  adapters: MailboxAdapter[];
  entries: AdapterEntry[];
  ownership: Ownership;
  handle: OwnerHandle;
  stop: AbortController;
  done: Promise<void>;
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('Ownership on a real SQLite store', () => {
  let dir: string;
  let stores: Store[];
  const names = Array.from({ length: 12 }, (_, i) => `acct-${i}`);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailgate-own-'));
    stores = [];
  });
  afterEach(async () => {
    for (const s of stores) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function replica(id: string, timing: Partial<Pick<OwnershipOptions, 'renewMs' | 'settleMs'>> = {}): Promise<Replica> {
    const store = await openStore(`sqlite:${join(dir, 'store.db')}`);
    stores.push(store);
    const adapters = names.map((n) => new MailboxAdapter(n));
    const entries = adapters.map(entryOf);
    const group = leaseGroup(entries.map((e) => leaseName(e)!));
    const handle = await startOwner({ store, id, heartbeatMs: 100, logger: silent, group });
    const calls: string[] = [];
    const watched = new Proxy(store, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(key));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const logs: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => logs.push(JSON.parse(line).msg) } });
    // A lease outlives any stall of a loaded machine: hand-overs here come from stops and joins, not expiry.
    const ownership = new Ownership(entries, { store: watched, owner: id, group, ttlMs: 10_000, renewMs: 50, logger, ...timing });
    const stop = new AbortController();
    const sink: Intake = {
      accept: async (_batch, { checkpoint, fence } = {}) => {
        if (checkpoint) await store.setCheckpoint(checkpoint.key, checkpoint.value, fence);
        return [];
      },
      checkpoint: (key) => store.getCheckpoint(key),
      item: async () => undefined,
    };
    const leaving = new Promise<void>((r) => stop.signal.addEventListener('abort', () => r(), { once: true })).then(() =>
      handle.leaveGroup(),
    );
    const done = ownership.run(sink, stop.signal, leaving);
    return { id, calls, logs, adapters, entries, ownership, handle, stop, done };
  }

  const atOnce = (r: Replica): boolean => r.logs.some((m) => m.includes('taking mailbox leases at once'));

  const running = (r: Replica): string[] => r.adapters.filter((a) => a.running).map((a) => a.name);

  it('splits the mailboxes between two replicas, never runs one twice, and hands over at once on stop', async () => {
    const a = await replica('gw-a');
    await waitFor('a to run every mailbox', () => running(a).length === names.length);
    const b = await replica('gw-b');
    const both = (): boolean => running(a).length + running(b).length === names.length && running(a).length > 0 && running(b).length > 0;
    let overlap = 0;
    await waitFor('the mailboxes to be split', async () => {
      if (running(a).some((n) => running(b).includes(n))) overlap++;
      return both() && (await stores[0]!.listLeases()).filter((l) => l.owner === 'gw-a').length === running(a).length;
    });
    expect(overlap).toBe(0);
    expect(running(b).sort()).toEqual(names.filter((n) => preferredOwner(`imap:${n}`, ['gw-a', 'gw-b']) === 'gw-b').sort());
    // Standby adapters are shown as such.
    expect(
      a.entries
        .filter((e) => e.state === 'standby')
        .map((e) => e.name)
        .sort(),
    ).toEqual(running(b).sort());
    const leases = await stores[0]!.listLeases();
    expect(leases.map((l) => l.owner).sort()).toEqual([...running(a).map(() => 'gw-a'), ...running(b).map(() => 'gw-b')].sort());

    const stopAt = Date.now();
    a.stop.abort();
    await a.done;
    expect(running(a)).toEqual([]);
    await waitFor('b to take every mailbox', () => running(b).length === names.length);
    // Handed over within a few checks, long before a lease would have expired (3 s).
    expect(Date.now() - stopAt).toBeLessThan(2_000);
    b.stop.abort();
    await b.done;
    await a.handle.stop();
    await b.handle.stop();
    expect(await stores[0]!.listLeases()).toEqual([]);
  });

  it('a replica whose leases were taken over stops its adapters, and the store refuses its stale writes', async () => {
    const a = await replica('gw-a');
    await waitFor('a to run every mailbox', () => running(a).length === names.length);
    const store = stores[0]!;
    const victim = a.adapters[0]!;
    // Another process takes the lease after it ran out (as if gw-a had been paused past it).
    await store.reapOwners(['gw-a'], 3);
    const thief = await store.acquireLease(`imap:${victim.name}`, 'gw-x', 60_000);
    expect(thief).toBeDefined();
    await expect(victim.write(7)).rejects.toMatchObject({ code: 'MAILGATE_ERR_STORE_FENCED' });
    expect(await store.getCheckpoint(`imap:${victim.name}:INBOX`)).toEqual({ lastUid: 1 });
    await waitFor('a to stop what it lost', () => !victim.running);
    // The heartbeat registers gw-a again; it takes back the free leases, never the one gw-x holds.
    await waitFor('a to run the others again', () => running(a).length === names.length - 1);
    expect(victim.running).toBe(false);
    a.stop.abort();
    await a.done;
    await a.handle.stop();
  });

  it('a lone replica takes its leases at once (regression: it waited a settle second before its first lease)', async () => {
    // The settle wait and the check interval are a minute: only a replica that does not wait runs its mailboxes here.
    const a = await replica('gw-a', { renewMs: 60_000, settleMs: 60_000 });
    await waitFor('a to run every mailbox', () => running(a).length === names.length);
    expect(atOnce(a)).toBe(true);
    // One look at the members, then the first check: renew, list, take every lease.
    expect(a.calls.slice(0, 3)).toEqual(['listOwners', 'renewLeases', 'listOwners']);
    expect(a.calls.filter((c) => c === 'acquireLease')).toHaveLength(names.length);
    a.stop.abort();
    await a.done;
    await a.handle.stop();
  });

  it('a replica that finds another member registered waits before it takes any lease', async () => {
    const store = await openStore(`sqlite:${join(dir, 'store.db')}`);
    stores.push(store);
    const group = leaseGroup(names.map((n) => `imap:${n}`));
    const other = await startOwner({ store, id: 'gw-b', heartbeatMs: 100, logger: silent, group });
    const a = await replica('gw-a', { renewMs: 60_000, settleMs: 60_000 });
    await waitFor('a to look at the members', () => a.logs.some((m) => m.includes('other replicas are registered')));
    // Nothing but that look happened: no check, no lease, no mailbox.
    expect(a.calls).toEqual(['listOwners']);
    a.stop.abort();
    await a.done;
    expect(a.calls.filter((c) => c === 'acquireLease' || c === 'renewLeases')).toEqual([]);
    expect(running(a)).toEqual([]);
    await a.handle.stop();
    await other.stop();
  });

  it('of two replicas started at the same instant at most one skips the wait, and they split the mailboxes', async () => {
    // Either order of registering and looking: started together, or one fully before the other registers.
    for (const together of [true, false]) {
      const pair = together
        ? await Promise.all([replica('gw-a', { settleMs: 300 }), replica('gw-b', { settleMs: 300 })])
        : [await replica('gw-a', { settleMs: 300 }), undefined];
      if (!together) {
        await waitFor('a to look at the members', () => pair[0]!.calls.includes('listOwners'));
        pair[1] = await replica('gw-b', { settleMs: 300 });
      }
      const [a, b] = pair as [Replica, Replica];
      await waitFor('both to look', () => a.logs.length > 0 && b.logs.length > 0);
      expect([a, b].filter(atOnce).length).toBeLessThanOrEqual(1);
      if (!together) expect([atOnce(a), atOnce(b)]).toEqual([true, false]);
      let overlap = 0;
      await waitFor('the mailboxes to be split', () => {
        if (running(a).some((n) => running(b).includes(n))) overlap++;
        return running(a).length + running(b).length === names.length && running(b).length > 0 && running(a).length > 0;
      });
      expect(overlap).toBe(0);
      expect(running(b).sort()).toEqual(names.filter((n) => preferredOwner(`imap:${n}`, ['gw-a', 'gw-b']) === 'gw-b').sort());
      for (const r of [a, b]) r.stop.abort();
      await Promise.all([a.done, b.done]);
      await Promise.all([a.handle.stop(), b.handle.stop()]);
    }
  });
});
