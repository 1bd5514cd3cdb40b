/**
 * Intake's group commit: parsed calls wait here, and the committer takes every one waiting
 * when its previous commit has finished (up to a message budget, and at most one call with a
 * checkpoint or fence) and writes them in one store transaction (`Store.enqueue`): concurrent
 * calls share one commit and one fsync. Each call is settled with one answer per input.
 */
import { isGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Checkpoint } from '../model/origin.js';
import type { Fence, OutboxInput, Store } from '../store/types.js';
import type { Admission } from './admission.js';
import type { Accepted } from './types.js';

/** Most messages one commit writes, by default: bounds the time a transaction holds the store. */
export const DEFAULT_COMMIT_MESSAGES = 1_000;

/**
 * Longest a commit waits for calls still being parsed to join it, in ms: above the ~2.5 ms in
 * which the one parse worker of two cores parses the 8 messages of senders that each wait for
 * their answer, so that such a round is not split into two commits (docs/smtp.md).
 */
const GATHER_MS = 3;

/** A parsed call as the committer gets it. */
export interface Call {
  inputs: OutboxInput[];
  /** Push: refused when it would take a route over its limit, failures reported as MAILGATE_ERR_INTAKE_UNAVAILABLE. */
  refuse: boolean;
  checkpoint?: Checkpoint;
  fence?: Fence;
  /**
   * The caller looked the keys up itself just before parsing (pull): the commit does not look
   * them up again. An item stored meanwhile under one of them is still found, inside the write's
   * own transaction (`Store.enqueue` answers it as a duplicate).
   */
  looked?: boolean;
}

interface Waiting extends Call {
  resolve: (results: Accepted[]) => void;
  reject: (err: unknown) => void;
}

/** An item that holds an input's key or alias already; `conflict` when only the alias matched (other bytes). */
interface Known {
  id: number;
  conflict: boolean;
}

export interface CommitterOptions {
  store: Pick<Store, 'enqueue' | 'findKeys'>;
  room: Admission;
  logger?: Logger;
  maxCommitMessages?: number;
  /** The error a refused (push) call gets for a failure. */
  unavailable: (err: unknown) => unknown;
  /** The error a call gets when its signal aborted before its commit. */
  aborted: (signal: AbortSignal) => unknown;
}

export interface Committer {
  /** Resolves with one answer per input once the call is durable. */
  submit(call: Call, signal?: AbortSignal): Promise<Accepted[]>;
  /** Runs a parse; a commit about to start waits a moment for parses in flight to join it. */
  parsing<T>(work: () => Promise<T>): Promise<T>;
}

function resultOf(input: OutboxInput, id: number, duplicate: boolean, conflict: boolean): Accepted {
  const result: Accepted = { id: String(id), duplicate };
  if (conflict) result.conflict = true;
  if (!duplicate && input.error !== undefined) result.dead = { code: input.error.code, message: input.error.message };
  return result;
}

const marked = (c: Call): boolean => c.checkpoint !== undefined || c.fence !== undefined;

export function committer(options: CommitterOptions): Committer {
  const { store, room, logger } = options;
  const maxCommit = options.maxCommitMessages ?? DEFAULT_COMMIT_MESSAGES;
  const waiting: Waiting[] = [];
  let committing = false;
  let inFlight = 0;
  let parsed: (() => void) | undefined;

  /** Calls waiting, in arrival order, up to maxCommit messages and one checkpoint or fence (at least one call). */
  function take(): Waiting[] {
    let n = 0;
    let i = 0;
    let mark = false;
    while (i < waiting.length) {
      const s = waiting[i]!;
      if (i > 0 && (n + s.inputs.length > maxCommit || (marked(s) && mark))) break;
      n += s.inputs.length;
      mark ||= marked(s);
      i++;
    }
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
   * While other calls are still being parsed, waits until they are (at most GATHER_MS): each
   * commit is a synchronous fsync on this thread, so one that carries them costs less than the
   * next one would.
   */
  async function gather(): Promise<void> {
    if (inFlight === 0) return;
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

  const fail = (s: Waiting, err: unknown): void => s.reject(s.refuse ? options.unavailable(err) : err);

  /** Stores one group of calls; settles each. Never rejects. */
  async function commit(group: Waiting[]): Promise<void> {
    try {
      const known = await knownIds(await toLookUp(group));
      const admitted = await room.admit(group, known);
      await write(admitted, known);
    } catch (err) {
      logger?.warn({ err, calls: group.length }, 'intake: commit failed');
      for (const s of group) fail(s, err);
    }
  }

  /**
   * The inputs of push calls whose keys are looked up before the write. The write answers a key
   * stored already as a duplicate itself, inside its own transaction, as the lookup would; but it
   * cannot tell the outbox limit that a duplicate takes no room, and it adds the alias (the
   * sender's event id) of a duplicate to the item. So every push input is looked up while a route
   * might not have room for all of them, and otherwise only those with an alias: a commit of
   * messages without one (SMTP) makes no lookup at all.
   */
  async function toLookUp(group: Waiting[]): Promise<OutboxInput[]> {
    const push = group.filter((s) => s.looked !== true);
    if (push.length === 0) return [];
    const inputs = push.flatMap((s) => s.inputs);
    if (!(await room.fits(push))) return inputs;
    return inputs.filter((it) => it.aliases !== undefined && it.aliases.length > 0);
  }

  /** The item each input's alias or key names already, by input. */
  async function knownIds(inputs: OutboxInput[]): Promise<Map<OutboxInput, Known>> {
    const byRoute = new Map<string, string[]>();
    for (const it of inputs) {
      const list = byRoute.get(it.route) ?? [];
      list.push(it.key, ...(it.aliases ?? []));
      byRoute.set(it.route, list);
    }
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

  /**
   * One transaction for every new input of the admitted calls. When it fails as a write (not an
   * unreachable store), each call is tried alone, so that one message the store refuses (or a
   * lease lost) does not fail the others it shared the commit with.
   */
  async function write(admitted: Waiting[], known: Map<OutboxInput, Known>): Promise<void> {
    try {
      await writeTogether(admitted, known);
    } catch (err) {
      const alone = isGatewayError(err) && (err.code === 'MAILGATE_ERR_STORE_WRITE_FAILED' || err.code === 'MAILGATE_ERR_STORE_FENCED');
      if (admitted.length < 2 || !alone) throw err;
      for (const s of admitted) await writeTogether([s], known).catch((e: unknown) => fail(s, e));
    }
  }

  async function writeTogether(group: Waiting[], known: Map<OutboxInput, Known>): Promise<void> {
    const fresh = group.flatMap((s) => s.inputs.filter((it) => !known.has(it)));
    const mark = group.find(marked);
    const { items } = await store.enqueue(fresh, mark?.checkpoint, mark?.fence);
    const stored = new Map(fresh.map((it, i) => [it, items[i]!]));
    for (const s of group) {
      s.resolve(
        s.inputs.map((it) => {
          const k = known.get(it);
          if (k !== undefined) return resultOf(it, k.id, true, k.conflict);
          const o = stored.get(it)!;
          return resultOf(it, o.id, o.duplicate, o.duplicate && o.key !== it.key);
        }),
      );
    }
  }

  return {
    submit(call, signal) {
      if (signal?.aborted) return Promise.reject(options.aborted(signal));
      return new Promise<Accepted[]>((resolve, reject) => {
        const onAbort = (): void => {
          const at = waiting.indexOf(s);
          if (at < 0) return; // already in a commit: it completes
          waiting.splice(at, 1);
          reject(options.aborted(signal!));
        };
        const done = (): void => signal?.removeEventListener('abort', onAbort);
        const s: Waiting = { ...call, resolve: (r) => (done(), resolve(r)), reject: (e) => (done(), reject(e)) };
        signal?.addEventListener('abort', onAbort, { once: true });
        waiting.push(s);
        kick();
      });
    },
    async parsing(work) {
      inFlight += 1;
      try {
        return await work();
      } finally {
        if ((inFlight -= 1) === 0) parsed?.();
      }
    },
  };
}
