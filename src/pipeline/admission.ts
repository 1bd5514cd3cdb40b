/**
 * Room in the outbox (`delivery.max_outbox` queued items per route): pull calls wait for it,
 * push calls are refused without it (before parsing, and again by the commit that would take
 * them over the limit). Another route's backlog never stalls or refuses a route.
 */
import { GatewayError } from '../errors.js';
import type { OutboxInput, Store } from '../store/types.js';
import type { Inbound } from './types.js';

/** Depths read longer ago than this are read again before a wait or a commit admits messages by them. */
const DEPTH_TTL_MS = 1_000;

export interface AdmissionOptions {
  store: Pick<Store, 'outboxDepth' | 'findKeys'>;
  maxOutbox: number;
  /** How often a waiting call looks at the outbox again, in ms. */
  pollMs: number;
  /** Ends the waits. */
  signal?: AbortSignal;
}

/** A call as the commit sees it: its inputs, and whether it is refused (push) or waited for (pull) when full. */
interface Call {
  inputs: OutboxInput[];
  refuse: boolean;
  reject: (err: unknown) => void;
}

export interface Admission {
  /**
   * Waits while any of the batch's routes holds maxOutbox queued items, counting the messages
   * of calls let through before and not stored yet (or until the signal aborts); then counts
   * this batch's until the returned release is called (once it is stored, or failed). A reader
   * with several calls in flight (IMAP reads ahead) so passes the limit by at most one call.
   */
  waitForRoom(routes: readonly string[]): Promise<() => void>;
  /** Refuses at once when a route has no room left, unless every message for it is stored already (a retry is its duplicate). */
  refuseWhenFull(batch: Inbound[], keysOf: (m: Inbound) => { key: string; alias?: string }): Promise<void>;
  /**
   * Whether every call fits its routes' limits even when none of its messages is stored already:
   * then admitting them needs no lookup of the ones that are (a duplicate takes no room).
   */
  fits(group: readonly Pick<Call, 'inputs' | 'refuse'>[]): Promise<boolean>;
  /** The calls that fit their routes' limits (pull calls always do); the refused ones are rejected. */
  admit<C extends Call>(group: C[], known: ReadonlyMap<OutboxInput, unknown>): Promise<C[]>;
}

/** Per call, the messages it would add to each route: a push call's new ones that are not dead letters. */
function needsOf(group: readonly Pick<Call, 'inputs' | 'refuse'>[], known: ReadonlyMap<OutboxInput, unknown>): Array<Map<string, number>> {
  return group.map((s) => {
    const need = new Map<string, number>();
    if (!s.refuse) return need;
    for (const it of s.inputs) if (!known.has(it) && it.error === undefined) need.set(it.route, (need.get(it.route) ?? 0) + 1);
    return need;
  });
}

function totalOf(needs: ReadonlyArray<Map<string, number>>): Map<string, number> {
  const total = new Map<string, number>();
  for (const need of needs) for (const [route, n] of need) total.set(route, (total.get(route) ?? 0) + n);
  return total;
}

export function admission(options: AdmissionOptions): Admission {
  const { store, maxOutbox } = options;
  /**
   * Queued items per route as last read, plus what was admitted (push) or let through and
   * stored (pull) since. Delivery drains and other writers (replicas) add meanwhile, so it is
   * read again when it is older than DEPTH_TTL_MS or says the route is (nearly) full.
   */
  const depths = new Map<string, { n: number; at: number }>();
  /** Messages of pull calls let through the wait for room and not stored yet, by route. */
  const ahead = new Map<string, number>();
  // Every caller waiting for room (an IMAP service may have a thousand accounts blocked at once)
  // is woken by one listener on the shared signal rather than adding one each.
  const pausing = new Set<() => void>();
  options.signal?.addEventListener('abort', () => [...pausing].forEach((wake) => wake()), { once: true });

  function pause(): Promise<void> {
    if (options.signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        pausing.delete(done);
        resolve();
      };
      const timer = setTimeout(done, options.pollMs);
      pausing.add(done);
    });
  }

  async function depthOf(route: string, need: number): Promise<number> {
    const d = depths.get(route);
    if (d !== undefined && Date.now() - d.at < DEPTH_TTL_MS && d.n + need <= maxOutbox) return d.n;
    const n = await store.outboxDepth(route);
    depths.set(route, { n, at: Date.now() });
    return n;
  }

  function full(route: string, depth: number): GatewayError {
    return new GatewayError(
      'MAILGATE_ERR_INTAKE_OUTBOX_FULL',
      `route ${route} holds ${depth} queued items (delivery.max_outbox ${maxOutbox}): try again later`,
      { details: { route, depth, maxOutbox } },
    );
  }

  return {
    async waitForRoom(routes) {
      const counts = new Map<string, number>();
      for (const name of routes) counts.set(name, (counts.get(name) ?? 0) + 1);
      for (;;) {
        // The depth as last read while it leaves room for one more message beside those ahead,
        // read again otherwise (or once older than DEPTH_TTL_MS): a route with room costs no count.
        const read = new Map<string, number>();
        for (const name of counts.keys()) read.set(name, await depthOf(name, (ahead.get(name) ?? 0) + 1));
        // Checked and counted in one step (no await between): calls in flight see each other.
        const room = [...read].every(([name, n]) => n + (ahead.get(name) ?? 0) < maxOutbox);
        if (room || options.signal?.aborted) break;
        await pause();
      }
      for (const [name, n] of counts) ahead.set(name, (ahead.get(name) ?? 0) + n);
      return () => {
        for (const [name, n] of counts) {
          ahead.set(name, ahead.get(name)! - n);
          // Stored now (or failed): counted in the depth until it is read again. Counting a failed
          // call, or one read again meanwhile, only makes the next wait read the depth sooner.
          const d = depths.get(name);
          if (d !== undefined) d.n += n;
        }
      };
    },

    async refuseWhenFull(batch, keysOf) {
      for (const name of new Set(batch.map((m) => m.route))) {
        const depth = await depthOf(name, 1);
        if (depth < maxOutbox) continue;
        const keys = batch.filter((m) => m.route === name).map((m) => Object.values(keysOf(m)));
        const found = await store.findKeys(name, keys.flat());
        if (!keys.every((ks) => ks.some((k) => found.has(k)))) throw full(name, depth);
      }
    },

    async fits(group) {
      for (const [route, n] of totalOf(needsOf(group, new Map()))) if ((await depthOf(route, n)) + n > maxOutbox) return false;
      return true;
    },

    async admit(group, known) {
      const needs = needsOf(group, known);
      const total = totalOf(needs);
      const depth = new Map<string, number>();
      for (const [route, n] of total) depth.set(route, await depthOf(route, n));
      const admitted: typeof group = [];
      group.forEach((s, i) => {
        const over = [...needs[i]!].find(([route, n]) => depth.get(route)! + n > maxOutbox);
        if (over !== undefined) return s.reject(full(over[0], depth.get(over[0])!));
        for (const [route, n] of needs[i]!) depth.set(route, depth.get(route)! + n);
        admitted.push(s);
      });
      // What the commit adds counts until the depth is read again.
      for (const [route, n] of depth) depths.set(route, { n, at: depths.get(route)!.at });
      return admitted;
    },
  };
}
