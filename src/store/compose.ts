/**
 * One store out of its per-concern modules, behind one guard: every method of every concern
 * answers a promise, and a driver failure leaves it as a coded GatewayError
 * (MAILGATE_ERR_STORE_UNAVAILABLE or _WRITE_FAILED, `wrapStoreError`) naming the method. Both
 * implementations compose this way, so neither repeats a delegation per method.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { wrapStoreError } from './common.js';
import type { Store, StoreConcerns, StoreFull } from './types.js';

/**
 * A concern as a backend implements it: the contract's methods, each free to answer at once
 * (better-sqlite3 is synchronous) or with a promise (pg).
 */
export type Backend<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R | Promise<R> : T[K];
};

/** The implementations of every concern, by the names of StoreConcerns. */
export type BackendConcerns = { [K in keyof StoreConcerns]: Backend<StoreConcerns[K]> };

/**
 * The methods of each concern and the name a failure is reported under (`true`: the method's
 * own name). Typed as a complete record, so a method added to a contract and not listed here,
 * or listed and not in the contract, fails to compile.
 */
const METHODS: { [K in keyof StoreConcerns]: Record<keyof StoreConcerns[K], true | string> } = {
  outbox: {
    knownKeys: true,
    claim: true,
    markDelivered: true,
    renewClaims: true,
    scheduleRetry: true,
    deadLetter: true,
    pruneDelivered: true,
    outboxDepth: true,
    outboxCounts: true,
    getItem: true,
    pendingActions: true,
    finishActions: true,
  },
  keyed: { enqueue: true, findKeys: true, findKeysAndBegin: true, itemState: true },
  checkpoints: { getCheckpoint: true, setCheckpoint: true, listCheckpoints: true },
  leases: { acquireLease: true, renewLease: true, renewLeases: true, releaseLease: true, getLease: true, listLeases: true },
  owners: { registerOwner: true, heartbeatOwner: true, deregisterOwner: true, listOwners: true, reapOwners: true },
  ledger: { lookup: 'ledger lookup', record: 'ledger record' },
  threads: { indexThread: true, threadMembers: true },
  deadLetters: { listDeadLetters: true, getDeadLetter: true, replayDeadLetter: true, purgeDeadLetters: true },
  predictions: { savePredictions: true, listPredictions: true },
  counters: { addAiUnits: true, counters: true },
  console: {
    listItems: true,
    itemAttempts: true,
    itemRaw: true,
    itemsByComment: true,
    itemCounts: true,
    attemptCounts: true,
    aiUnitsByDay: true,
  },
  controls: {
    pauseRoute: true,
    resumeRoute: true,
    listRoutePauses: true,
    mailboxState: true,
    listMailboxStates: true,
    putMailboxState: true,
    putFolderState: true,
    countFiltered: true,
    countParseAttempts: true,
    beginParseAttempts: true,
    parseAttempts: true,
    clearParseAttempts: true,
  },
  maintenance: {
    pruneBatch: true,
    foldSearches: true,
    foldThreads: true,
    pruneThreads: true,
    pruneCheckpoints: true,
    reclaimSpace: true,
    storeStats: true,
    probeSpace: true,
  },
};

type Method = (...args: unknown[]) => unknown;

/** The method whose success clears every failure for space (`MaintenanceStore.probeSpace`). */
const SPACE_PROBE = 'probeSpace';

/** Tracks writes that fail for want of space, per method, until that method succeeds again. */
class SpaceHealth {
  private readonly failing = new Map<string, StoreFull>();

  failed(method: string, err: unknown): void {
    if (!this.failing.has(method)) {
      const message = err instanceof Error ? err.message : String(err);
      this.failing.set(method, { since: new Date().toISOString(), method, message });
    }
  }

  succeeded(method: string): void {
    if (this.failing.size === 0) return;
    // The space probe's write succeeding answers for every method: space is back.
    if (method === SPACE_PROBE) this.failing.clear();
    else this.failing.delete(method);
  }

  health(): { full?: StoreFull } {
    let first: StoreFull | undefined;
    for (const f of this.failing.values()) if (first === undefined || f.since < first.since) first = f;
    return first === undefined ? {} : { full: first };
  }
}

/** `impl`'s listed methods, each answering a promise and wrapping a failure under its name. */
/** The longest pause between two attempts of a call the store refused as busy. */
const BUSY_PAUSE_MAX_MS = 200;

/**
 * Calls `fn` again while the backend answers "busy" and its budget lasts, pausing between
 * attempts without holding the thread (a refused call is rolled back whole, so asking again is
 * the same call); the last refusal is thrown.
 */
async function patiently<T>(fn: () => Promise<T> | T, busy: BackendFailures['busy']): Promise<T> {
  if (busy === undefined || busy.budgetMs === 0) return fn();
  const until = Date.now() + busy.budgetMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, BUSY_PAUSE_MAX_MS)) {
    try {
      return await fn();
    } catch (err) {
      const left = until - Date.now();
      if (!busy.is(err) || left <= 0) throw err;
      await sleep(Math.min(pause, left));
    }
  }
}

function guarded(
  impl: object,
  methods: Record<string, true | string>,
  failures: BackendFailures,
  space: { full: (err: unknown) => boolean; health: SpaceHealth },
): Record<string, Method> {
  const out: Record<string, Method> = {};
  const { unavailable, busy } = failures;
  for (const [name, label] of Object.entries(methods)) {
    const fn = (impl as Record<string, Method>)[name]!;
    const what = label === true ? name : label;
    out[name] = async (...args: unknown[]) => {
      try {
        const result = await patiently(() => fn.apply(impl, args), busy);
        space.health.succeeded(name);
        return result;
      } catch (err) {
        if (space.full(err)) space.health.failed(name, err);
        throw wrapStoreError(err, unavailable, what);
      }
    };
  }
  return out;
}

/** What tells a backend's failures apart: "cannot reach the store", and "no space left to write". */
export interface BackendFailures {
  unavailable: (err: unknown) => boolean;
  full: (err: unknown) => boolean;
  /** A refusal worth asking again, and for how long in all (SQLite: another connection's lock). */
  busy?: { is: (err: unknown) => boolean; budgetMs: number };
}

/**
 * The Store of a backend: its concerns behind the guard, `migrate` guarded too, `close` as
 * given, `health` from the guard's record of writes that failed for space.
 */
export function composeStore(
  kind: string,
  concerns: BackendConcerns,
  lifecycle: { migrate(): number | Promise<number>; close(): Promise<void> },
  failures: BackendFailures,
): Store {
  const health = new SpaceHealth();
  const space = { full: failures.full, health };
  const store: Record<string, unknown> = { kind, close: () => lifecycle.close(), health: () => health.health() };
  for (const name of Object.keys(METHODS) as Array<keyof StoreConcerns>) {
    Object.assign(store, guarded(concerns[name], METHODS[name], failures, space));
  }
  Object.assign(store, guarded(lifecycle, { migrate: true }, failures, space));
  return store as unknown as Store;
}
