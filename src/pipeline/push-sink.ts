/**
 * Push intake (DESIGN.md "Push intake"): what webhook, upload and SMTP endpoints hand
 * messages to. `submit` resolves only once its messages are durable, and then answers the id
 * of each message's outbox item.
 *
 * Each submit is parsed at once (the intake's parse pool, budgets and dead letters); parsed
 * submits wait for the committer, which takes every one waiting when its previous commit has
 * finished and writes them in one store transaction: concurrent submits share one commit and
 * one fsync. A submit is all or nothing: refused whole when a route's outbox would go over
 * `maxOutbox` (push intake never waits for room), and when the transaction fails.
 *
 * Idempotency lives in the store, so it holds across restarts and replicas: an item is keyed
 * by the SHA-256 of its bytes within its route's target, and a provider event id is an alias
 * of the same item (`Store.enqueueKeyed`). A duplicate answers the first item's id.
 */
import { parseLimit } from '../limits.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { RouteConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { OutboxInput, Store } from '../store/types.js';
import type { RuntimeEvents } from './events.js';
import type { Intake } from './intake.js';
import { eventKey, outboxKey } from './origin.js';
import type { Inbound, PushItemState, PushResult, PushSink } from './types.js';

/** Most messages one commit writes, by default: bounds the time a transaction holds the store. */
export const DEFAULT_PUSH_COMMIT_MESSAGES = 1_000;

export interface PushSinkOptions {
  intake: Intake;
  store: Store;
  routes: ReadonlyMap<string, RouteConfig>;
  /** Queued items of a route beyond which pushed messages for it are refused (delivery.max_outbox). */
  maxOutbox: number;
  logger: Logger;
  /** Most messages one commit writes (default DEFAULT_PUSH_COMMIT_MESSAGES); a larger submit is one commit alone. */
  maxCommitMessages?: number;
  /** Where each committed message's `item:stored` goes (metrics, the console, waking delivery). */
  events?: RuntimeEvents;
}

/** A parsed submit waiting for its commit. */
interface Submission {
  batch: Inbound[];
  inputs: OutboxInput[];
  resolve: (results: PushResult[]) => void;
  reject: (err: unknown) => void;
}

function unavailable(err: unknown): GatewayError {
  if (isGatewayError(err) && (err.code === 'MAILGATE_ERR_INTAKE_UNAVAILABLE' || err.code === 'MAILGATE_ERR_INTAKE_OUTBOX_FULL')) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new GatewayError('MAILGATE_ERR_INTAKE_UNAVAILABLE', `pushed messages could not be stored: ${message}`, { cause: err });
}

function aborted(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('the submit was cancelled before its messages were stored', 'AbortError');
}

/** An item that holds an input's key or alias already; `conflict` when only the alias matched (other bytes). */
interface Known {
  id: number;
  conflict: boolean;
}

/** Longest a commit waits for submits still being parsed to join it, in ms. */
const GATHER_MS = 2;

/** Depths read longer ago than this are read again before a commit admits messages by them. */
const DEPTH_TTL_MS = 1_000;

/** A result for one input: stored as the item `id`, new or a duplicate. */
function resultOf(input: OutboxInput, id: number, duplicate: boolean, conflict: boolean): PushResult {
  const result: PushResult = { id: String(id), duplicate };
  if (conflict) result.conflict = true;
  if (!duplicate && input.error !== undefined) result.dead = { code: input.error.code, message: input.error.message };
  return result;
}

export function createPushSink(options: PushSinkOptions): PushSink {
  const { intake, store, routes, logger } = options;
  const maxOutbox = parseLimit('maxOutbox', options.maxOutbox, 0);
  const maxCommit = parseLimit('maxCommitMessages', options.maxCommitMessages, DEFAULT_PUSH_COMMIT_MESSAGES);
  /**
   * Queued items per route as last read, plus what this sink stored since. Delivery drains and
   * other writers (pull intake, replicas) add meanwhile, so it is read again when it is older
   * than DEPTH_TTL_MS or says the route is (nearly) full.
   */
  const depths = new Map<string, { n: number; at: number }>();
  const waiting: Submission[] = [];
  let committing = false;
  /** Submits being parsed: a commit about to start waits a moment for them (see gather). */
  let parsing = 0;
  let parsed: (() => void) | undefined;

  /** The route's depth, read again unless the known one is recent and leaves room for `need` more. */
  async function depthOf(route: string, need: number): Promise<number> {
    const d = depths.get(route);
    if (d !== undefined && Date.now() - d.at < DEPTH_TTL_MS && d.n + need <= maxOutbox) return d.n;
    const n = await store.outboxDepth(route);
    depths.set(route, { n, at: Date.now() });
    return n;
  }

  /**
   * Refuses at once, before parsing, when a route has no room left, unless every message for
   * it is stored already (a retry is answered as the duplicate it is, full or not).
   */
  async function refuseWhenFull(batch: Inbound[]): Promise<void> {
    for (const name of new Set(batch.map((m) => m.route))) {
      const depth = await depthOf(name, 1);
      if (depth < maxOutbox) continue;
      const route = routes.get(name)!;
      const keys = batch.filter((m) => m.route === name).map((m) => [outboxKey(route, m.origin, m.raw), eventKey(route, m.origin)]);
      const found = await store.findKeys(
        name,
        keys.flat().filter((k): k is string => k !== undefined),
      );
      if (!keys.every((ks) => ks.some((k) => k !== undefined && found.has(k)))) throw full(name, depth);
    }
  }

  function full(route: string, depth: number): GatewayError {
    return new GatewayError(
      'MAILGATE_ERR_INTAKE_OUTBOX_FULL',
      `route ${route} holds ${depth} queued items (delivery.max_outbox ${maxOutbox}): try again later`,
      { details: { route, depth, maxOutbox } },
    );
  }

  /** The outbox inputs of a batch, each with its provider event id as an alias. */
  async function prepare(batch: Inbound[]): Promise<OutboxInput[]> {
    const inputs = await intake.prepare(batch);
    inputs.forEach((input, i) => {
      const msg = batch[i]!;
      const alias = eventKey(routes.get(msg.route)!, msg.origin);
      if (alias !== undefined) input.aliases = [alias];
    });
    return inputs;
  }

  /** Submissions waiting, in arrival order, up to maxCommit messages (at least one submission). */
  function take(): Submission[] {
    let n = 0;
    let i = 0;
    while (i < waiting.length && (i === 0 || n + waiting[i]!.inputs.length <= maxCommit)) n += waiting[i++]!.inputs.length;
    return waiting.splice(0, i);
  }

  function kick(): void {
    if (committing || waiting.length === 0) return;
    committing = true;
    void (async () => {
      try {
        while (waiting.length > 0) {
          // Let parse results already delivered join this commit rather than the next.
          await new Promise<void>((r) => setImmediate(r));
          await gather();
          await commit(take());
        }
      } finally {
        committing = false;
      }
    })();
  }

  /**
   * While other submits are still being parsed, waits until they are (at most GATHER_MS): each
   * commit is a synchronous fsync on this thread, so one that carries them costs less than the
   * next one would.
   */
  async function gather(): Promise<void> {
    if (parsing === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, GATHER_MS);
      function finish(): void {
        clearTimeout(timer);
        parsed = undefined;
        resolve();
      }
      parsed = finish;
    });
  }

  /** Stores one group of submissions; settles each. Never rejects. */
  async function commit(group: Submission[]): Promise<void> {
    try {
      const known = await knownIds(group.flatMap((s) => s.inputs));
      const admitted = await admit(group, known);
      await write(admitted, known);
    } catch (err) {
      const e = unavailable(err);
      logger.warn({ err: e, submits: group.length }, 'push intake: commit failed, the senders will retry');
      for (const s of group) s.reject(e);
    }
  }

  /** The item each input's alias or key names already, by input. */
  async function knownIds(inputs: OutboxInput[]): Promise<Map<OutboxInput, Known>> {
    const byRoute = new Map<string, string[]>();
    for (const it of inputs) byRoute.set(it.route, [...(byRoute.get(it.route) ?? []), it.key, ...(it.aliases ?? [])]);
    const found = new Map<string, Map<string, number>>();
    for (const [route, keys] of byRoute) found.set(route, await store.findKeys(route, keys));
    const known = new Map<OutboxInput, Known>();
    for (const it of inputs) {
      const ids = found.get(it.route)!;
      const id = [...(it.aliases ?? []), it.key].map((k) => ids.get(k)).find((v) => v !== undefined);
      if (id !== undefined) known.set(it, { id, conflict: ids.get(it.key) !== id });
    }
    return known;
  }

  /** The submissions that fit their routes' outbox limits; the others are refused whole. */
  async function admit(group: Submission[], known: Map<OutboxInput, Known>): Promise<Submission[]> {
    const needs = group.map((s) => {
      const need = new Map<string, number>();
      for (const it of s.inputs) if (!known.has(it) && it.error === undefined) need.set(it.route, (need.get(it.route) ?? 0) + 1);
      return need;
    });
    const total = new Map<string, number>();
    for (const need of needs) for (const [route, n] of need) total.set(route, (total.get(route) ?? 0) + n);
    const depth = new Map<string, number>();
    for (const [route, n] of total) depth.set(route, await depthOf(route, n));
    const admitted: Submission[] = [];
    group.forEach((s, i) => {
      const over = [...needs[i]!].find(([route, n]) => depth.get(route)! + n > maxOutbox);
      if (over !== undefined) return s.reject(full(over[0], depth.get(over[0])!));
      for (const [route, n] of needs[i]!) depth.set(route, depth.get(route)! + n);
      admitted.push(s);
    });
    // What the commit adds counts until the depth is read again.
    for (const [route, n] of depth) depths.set(route, { n, at: depths.get(route)!.at });
    return admitted;
  }

  /**
   * One transaction for every new input of the admitted submissions. When it fails as a write
   * (not an unreachable store), each submission is tried alone, so that one message the store
   * refuses does not fail the others it shared the commit with.
   */
  async function write(admitted: Submission[], known: Map<OutboxInput, Known>): Promise<void> {
    try {
      await writeTogether(admitted, known);
    } catch (err) {
      if (admitted.length < 2 || !isGatewayError(err) || err.code !== 'MAILGATE_ERR_STORE_WRITE_FAILED') throw err;
      for (const s of admitted) await writeTogether([s], known).catch((e: unknown) => s.reject(unavailable(e)));
    }
  }

  async function writeTogether(group: Submission[], known: Map<OutboxInput, Known>): Promise<void> {
    const fresh = group.flatMap((s) => s.inputs.filter((it) => !known.has(it)));
    const outcomes = await store.enqueueKeyed(fresh);
    const stored = new Map(fresh.map((it, i) => [it, outcomes[i]!]));
    for (const s of group) {
      const results = s.inputs.map((it) => {
        const o = stored.get(it);
        if (o !== undefined) return resultOf(it, o.id, o.duplicate, o.duplicate && o.key !== it.key);
        const k = known.get(it)!;
        return resultOf(it, k.id, true, k.conflict);
      });
      report(s, results);
      s.resolve(results);
    }
  }

  /** One `item:stored` per message of a committed submission, in its order. */
  function report(s: Submission, results: PushResult[]): void {
    const events = options.events;
    if (events === undefined || !events.has('item:stored')) return;
    results.forEach((result, i) => {
      const inbound = s.batch[i]!;
      const base = {
        id: Number(result.id),
        route: inbound.route,
        adapter: inbound.origin.adapter,
        key: s.inputs[i]!.key,
        via: 'push' as const,
      };
      if (result.duplicate) events.emit('item:stored', { ...base, outcome: 'duplicate' });
      else if (result.dead !== undefined) events.emit('item:stored', { ...base, outcome: 'dead', error: result.dead });
      else events.emit('item:stored', { ...base, outcome: 'queued' });
    });
  }

  return {
    async submit(batch: Inbound[], signal?: AbortSignal): Promise<PushResult[]> {
      if (batch.length === 0) return [];
      for (const msg of batch) if (!routes.has(msg.route)) throw new Error(`push intake: message for unknown route "${msg.route}"`);
      if (signal?.aborted) throw aborted(signal);
      let inputs: OutboxInput[];
      try {
        await refuseWhenFull(batch);
        parsing += 1;
        try {
          inputs = await prepare(batch);
        } finally {
          if ((parsing -= 1) === 0) parsed?.();
        }
      } catch (err) {
        throw unavailable(err);
      }
      if (signal?.aborted) throw aborted(signal);
      return new Promise<PushResult[]>((resolve, reject) => {
        const onAbort = (): void => {
          const at = waiting.indexOf(entry);
          if (at < 0) return; // already in a commit: it completes
          waiting.splice(at, 1);
          reject(aborted(signal!));
        };
        const done = (): void => signal?.removeEventListener('abort', onAbort);
        const entry: Submission = {
          batch,
          inputs,
          resolve: (r) => (done(), resolve(r)),
          reject: (e) => (done(), reject(e)),
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        waiting.push(entry);
        kick();
      });
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
