/**
 * Intake, the one door for pull and push kinds (DESIGN.md "Contracts", "Push intake"):
 * messages -> parse (worker pool) -> document and preview -> one store transaction, together
 * with the caller's checkpoint. `accept` resolves per message only once it is durable (or known
 * as a duplicate), so no adapter acknowledges anything early.
 *
 * Every call is parsed at once; parsed calls wait for the committer, which takes every one
 * waiting when its previous commit has finished and writes them in one store transaction:
 * concurrent calls share one commit and one fsync (group commit). A call is all or nothing.
 *
 * `whenFull: 'wait'` (pull): waits while a route's outbox is full; calls are stored in call
 * order, a call's checkpoint only after the calls before it are durable, and never when one of
 * them failed. `whenFull: 'refuse'` (push): refused whole when a route's outbox would go over
 * `maxOutbox`; the sender retries.
 *
 * Idempotency lives in the store, so it holds across restarts and replicas: an item is keyed by
 * the key its adapter built within its route's target, and an id at the sender is an alias of
 * the same item. A duplicate answers the first item's id.
 */
import { GatewayError, isGatewayError } from '../errors.js';
import type { RouteConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { OutboxInput, Store } from '../store/types.js';
import { admission } from './admission.js';
import { POISON_CODE } from './poison.js';
import { committer } from './commit.js';
import type { RuntimeEvents } from './events.js';
import { unwrapJournals } from './journal-intake.js';
import { keysOf, noCounts, prepare, type IntakeCounters, type PrepareOptions, type Routed } from './prepare.js';
import type { AcceptOptions, Accepted, Inbound, Intake, PushItemState } from './types.js';

export type { IntakeCounters, ParseFn } from './prepare.js';
export { DEFAULT_COMMIT_MESSAGES } from './commit.js';

export interface IntakeOptions extends PrepareOptions {
  store: Store;
  routes: ReadonlyMap<string, RouteConfig>;
  /** Queued items of a route at which intake waits (pull) or refuses (push) (delivery.max_outbox). */
  maxOutbox: number;
  /** How often a waiting call looks at the outbox again, in ms. */
  backpressurePollMs?: number;
  /** Aborts the waits for room. */
  signal?: AbortSignal;
  logger?: Logger;
  /** Most messages one commit writes (default DEFAULT_COMMIT_MESSAGES); a larger call is one commit alone. */
  maxCommitMessages?: number;
  /** Where each message's `item:stored` goes once it is durable (metrics, the console, waking delivery). */
  events?: RuntimeEvents;
}

export interface IntakeCore extends Intake {
  /** The `wait` calls' counts (received, parsed, failed, queued, duplicates). */
  readonly counters: IntakeCounters;
}

function byRoute(routed: Routed[]): Map<string, Routed[]> {
  const out = new Map<string, Routed[]>();
  for (const r of routed) {
    const list = out.get(r.route.name) ?? [];
    list.push(r);
    out.set(r.route.name, list);
  }
  return out;
}

function unavailable(err: unknown): GatewayError {
  if (isGatewayError(err) && (err.code === 'MAILGATE_ERR_INTAKE_UNAVAILABLE' || err.code === 'MAILGATE_ERR_INTAKE_OUTBOX_FULL')) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new GatewayError('MAILGATE_ERR_INTAKE_UNAVAILABLE', `the messages could not be stored: ${message}`, { cause: err });
}

function aborted(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('the call was cancelled before its messages were stored', 'AbortError');
}

export function createIntake(options: IntakeOptions): IntakeCore {
  const { store, routes } = options;
  const counters = noCounts();
  const room = admission({
    store,
    maxOutbox: options.maxOutbox,
    ...(options.signal ? { signal: options.signal } : {}),
    pollMs: options.backpressurePollMs ?? 100,
  });
  const commits = committer({
    store,
    room,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.maxCommitMessages === undefined ? {} : { maxCommitMessages: options.maxCommitMessages }),
    unavailable,
    aborted,
  });

  function routeOf(msg: Inbound): RouteConfig {
    const route = routes.get(msg.route);
    if (!route) throw new Error(`intake: message for unknown route "${msg.route}"`);
    return route;
  }

  /**
   * Parses a call's messages (journal reports unwrapped first), counted in `c`. A commit about
   * to start may wait for a push call's parse (`joins`), not for a pull call's: that one is
   * submitted only once the pull call before it is durable (usually the call being written, or
   * one with a checkpoint of its own, which no commit shares), so waiting would only hold the
   * commit up.
   */
  function parseAll(routed: Routed[], c: IntakeCounters, joins: boolean, begun?: Begun): Promise<OutboxInput[]> {
    const work = async (): Promise<OutboxInput[]> => {
      const unwrapped = await unwrapJournals(routed, store);
      if (options.poison === undefined) return Promise.all(unwrapped.map((r) => prepare(options, r, c)));
      const suspects = await countAttempts(unwrapped, begun);
      const out = await Promise.all(unwrapped.map((r) => (suspects.has(r) ? undefined : prepare(options, r, c))));
      // Suspects one at a time: each counted just before its own parse, forgotten once it parsed.
      for (const [i, r] of unwrapped.entries()) {
        if (!suspects.has(r)) continue;
        const key = keysOf(r.route, r.msg).key;
        r.attempts = (await options.poison.count(r.route.name, [key])).get(key) ?? Number.POSITIVE_INFINITY;
        out[i] = await prepare(options, r, c);
        if (!isPoisoned(out[i]!)) await options.poison.forget(r.route.name, [key]);
      }
      for (const input of out) {
        if (input?.error?.code !== POISON_CODE) continue;
        const { route, key, origin, error } = input;
        options.logger?.warn({ route, key, adapter: origin.adapter, code: error.code }, `message set aside: ${error.message}`);
      }
      return out as OutboxInput[];
    };
    return joins ? commits.parsing(work) : work();
  }

  /**
   * Poison messages (poison.ts): messages never tried get one attempt counted in the store before
   * any parse runs (one write a route, unless `begun` answers for the route: a pulled call's
   * lookup counted them); answers the suspects, those counted before.
   */
  async function countAttempts(routed: Routed[], begun?: Begun): Promise<Set<Routed>> {
    const poison = options.poison!;
    const suspects = new Set<Routed>();
    for (const [route, list] of byRoute(routed)) {
      const keys = list.map((r) => keysOf(r.route, r.msg).key);
      const fresh = begun?.get(route) ?? (await poison.begin(route, keys));
      list.forEach((r, i) => {
        if (fresh.has(keys[i]!)) r.attempts = 1;
        else suspects.add(r);
      });
    }
    return suspects;
  }

  /**
   * Forgets the attempts of the messages of a durable call, but a poison message's (its sender's
   * retry, or a re-read, is then set aside at once, never parsed again), without waiting for that
   * write: neither a sender's answer nor the next pull call's commit waits for it. A pull call's
   * are written at once, a push call's gathered with other calls' (`forgetLater`). A count left
   * by a process that stopped first is harmless: a stored message read again is a duplicate,
   * never parsed, and a pushed one comes back only if its sender retries.
   */
  function forgetAttempts(inputs: OutboxInput[], via: 'pull' | 'push'): void {
    const poison = options.poison;
    if (poison === undefined) return;
    const byRoute = new Map<string, string[]>();
    for (const input of inputs) {
      if (isPoisoned(input)) continue;
      const list = byRoute.get(input.route) ?? [];
      list.push(input.key);
      byRoute.set(input.route, list);
    }
    for (const [route, keys] of byRoute) {
      if (via === 'push') poison.forgetLater(route, keys);
      else void poison.forget(route, keys);
    }
  }

  /** One `item:stored` per message of a durable call, in its order. */
  function report(batch: Inbound[], results: Accepted[], via: 'pull' | 'push'): void {
    const events = options.events;
    if (events === undefined || !events.has('item:stored')) return;
    batch.forEach((msg, i) => {
      const result = results[i]!;
      const route = routeOf(msg);
      const base = { id: Number(result.id), route: route.name, adapter: msg.origin.adapter, key: keysOf(route, msg).key, via };
      if (result.duplicate) events.emit('item:stored', { ...base, outcome: 'duplicate' });
      else if (result.dead !== undefined) events.emit('item:stored', { ...base, outcome: 'dead', error: result.dead });
      else events.emit('item:stored', { ...base, outcome: 'queued' });
    });
  }

  /**
   * Push: refused at once when full, parsed whole (attempts counted, as for pull: a message that
   * kills the process every time is set aside after `poison_after` tries of its sender, and
   * answered as stored so that the sender stops), committed with whatever else is waiting.
   */
  async function refuse(batch: Inbound[], opts: AcceptOptions): Promise<Accepted[]> {
    if (opts.signal?.aborted) throw aborted(opts.signal);
    let inputs: OutboxInput[];
    const routed = batch.map((msg) => ({ msg, route: routeOf(msg) }));
    try {
      await room.refuseWhenFull(batch, (m) => keysOf(routeOf(m), m));
      inputs = await parseAll(routed, noCounts(), true);
    } catch (err) {
      throw unavailable(err);
    }
    const results = await commits.submit({ inputs, refuse: true, ...marks(opts) }, opts.signal);
    forgetAttempts(inputs, 'push');
    report(batch, results, 'push');
    return results;
  }

  /**
   * Pull: stored one call at a time in call order. A call's parsing may overlap the previous
   * call's store, but its checkpoint is written only after the previous call is durable, and
   * never when the previous call failed.
   */
  let storing: Promise<unknown> = Promise.resolve();

  function inOrder<T>(step: (previous: Promise<unknown>) => Promise<T>): Promise<T> {
    const done = step(storing);
    storing = done;
    // Once the last call has failed, a later accept (e.g. an adapter retrying) starts afresh.
    done.catch(() => {
      if (storing === done) storing = Promise.resolve();
    });
    return done;
  }

  /** The wait for room of the last pull call: the next one waits after it. */
  let roomTurn: Promise<unknown> = Promise.resolve();

  function wait(batch: Inbound[], opts: AcceptOptions): Promise<Accepted[]> {
    return inOrder(async (previous) => {
      if (batch.length === 0) {
        await previous;
        if (opts.checkpoint) await store.setCheckpoint(opts.checkpoint.key, opts.checkpoint.value, opts.fence);
        return [];
      }
      // Room is taken in call order: a later call holding room the earlier one waits for would
      // wait in turn for that earlier one to be stored (calls are stored in order).
      const turn = roomTurn.then(() => room.waitForRoom(batch.map((m) => m.route)));
      roomTurn = turn.catch(() => undefined);
      const release = await turn;
      try {
        return await admitted(batch, opts, previous);
      } finally {
        release();
      }
    });
  }

  /** A pull call let through the wait for room: parsed beside the calls before it, stored after them. */
  async function admitted(batch: Inbound[], opts: AcceptOptions, previous: Promise<unknown>): Promise<Accepted[]> {
    counters.received += batch.length;
    // A message read again (a re-walked directory) is not parsed again.
    const { known, begun } = await knownBefore(batch);
    counters.duplicates += known.size;
    const fresh = batch.filter((_, i) => !known.has(i)).map((msg) => ({ msg, route: routeOf(msg) }));
    // Journal reports of one message in consecutive calls: the earlier call must be durable
    // before this one looks up what it stored (the envelope union).
    if (fresh.some((r) => r.route.unwrap === 'exchange_journal')) await previous;
    const inputs = await parseAll(fresh, counters, false, begun);
    await previous;
    const stored = await commits.submit({ inputs, refuse: false, looked: true, ...marks(opts) }, opts.signal);
    forgetAttempts(inputs, 'pull');
    counters.queued += stored.filter((r) => !r.duplicate && r.dead === undefined).length;
    counters.duplicates += stored.filter((r) => r.duplicate).length;
    let next = 0;
    const results = batch.map((_, i) => known.get(i) ?? stored[next++]!);
    report(batch, results, 'pull');
    return results;
  }

  /**
   * The messages of a call whose key or alias their route holds already, by index, with their
   * answer. With a poison guard, the same store call counts the first parse attempt of the others
   * (`begun`: the keys it counted, by route).
   */
  async function knownBefore(batch: Inbound[]): Promise<{ known: Map<number, Accepted>; begun?: Begun }> {
    const keyed = batch.map((m) => keysOf(routeOf(m), m));
    const byRoute = new Map<string, Array<{ key: string; alias?: string }>>();
    batch.forEach((m, i) => {
      const list = byRoute.get(m.route) ?? [];
      list.push(keyed[i]!);
      byRoute.set(m.route, list);
    });
    const found = new Map<string, Map<string, number>>();
    const poison = options.poison;
    const begun: Begun | undefined = poison === undefined ? undefined : new Map();
    for (const [route, messages] of byRoute) {
      if (poison === undefined) {
        found.set(
          route,
          await store.findKeys(
            route,
            messages.flatMap((k) => Object.values(k)),
          ),
        );
        continue;
      }
      const looked = await poison.lookUp(route, messages);
      found.set(route, looked.found);
      begun!.set(route, looked.begun);
    }
    const known = new Map<number, Accepted>();
    batch.forEach((m, i) => {
      const ids = found.get(m.route)!;
      const { key, alias } = keyed[i]!;
      const id = (alias === undefined ? undefined : ids.get(alias)) ?? ids.get(key);
      if (id !== undefined) known.set(i, { id: String(id), duplicate: true, ...(ids.get(key) !== id ? { conflict: true } : {}) });
    });
    return begun === undefined ? { known } : { known, begun };
  }

  return {
    counters,
    accept(batch: Inbound[], opts: AcceptOptions = {}): Promise<Accepted[]> {
      try {
        for (const msg of batch) routeOf(msg);
      } catch (err) {
        return Promise.reject(err);
      }
      if (opts.whenFull !== 'refuse') return wait(batch, opts);
      return batch.length === 0 ? Promise.resolve([]) : refuse(batch, opts);
    },
    checkpoint(key: string) {
      return store.getCheckpoint(key);
    },
    async item(id: string): Promise<PushItemState | undefined> {
      if (!/^[1-9][0-9]{0,15}$/.test(id)) return undefined;
      const s = await store.itemState(Number(id)).catch((err: unknown) => Promise.reject(unavailable(err)));
      if (s === undefined) return undefined;
      const state: PushItemState = { id, route: s.route, state: s.status, commentId: s.commentId, attempts: s.attempts };
      if (s.status === 'queued' && s.attempts > 0) {
        state.state = 'retrying';
        if (s.nextAttemptAt !== undefined) state.nextAttemptAt = s.nextAttemptAt;
      }
      if (s.status === 'dead' && s.error !== undefined) state.error = s.error;
      return state;
    },
  };
}

/** The keys whose first parse attempt a pulled call's lookup counted, by route. */
type Begun = Map<string, Set<string>>;

const isPoisoned = (input: OutboxInput): boolean => input.error?.code === POISON_CODE;

function marks(opts: AcceptOptions): {
  checkpoint?: NonNullable<AcceptOptions['checkpoint']>;
  fence?: NonNullable<AcceptOptions['fence']>;
} {
  return { ...(opts.checkpoint ? { checkpoint: opts.checkpoint } : {}), ...(opts.fence ? { fence: opts.fence } : {}) };
}
