/**
 * Poison messages (DESIGN.md "Parsing safety"): a message that kills its parse worker — or the
 * whole process — every time must not stop its mailbox, nor make its sender retry for ever. Each
 * parse attempt of a message, pulled or pushed, is counted in the store by its key *before* the
 * parse runs, so a restart after a crash knows how often that message was tried; one tried
 * `poison_after` times is set aside as a dead letter with its raw bytes
 * (MAILGATE_ERR_INTAKE_POISON) without parsing it again, the mailbox moves on and a sender gets
 * its success answer. A parse worker that dies on a message is caught by the parse pool (which
 * replaces the worker and parses the message's batch-mates again): the death counts as an
 * attempt, one more is counted and the message is parsed again alone, up to `poison_after`
 * attempts (prepare.ts). The counts of a stored message are forgotten, but a poison message's
 * (it comes back set aside at once). The counts are written without waiting for the disk: they
 * must outlive the process, not a power cut (a lost one only gives one more attempt).
 *
 * Messages never tried are counted together (one write a call; for a pulled call, in the same
 * store call that looks up which of its messages are stored already) and parsed side by side. A
 * message already counted (its call never became durable: the process died) is a suspect:
 * suspects are parsed one at a time, each counted just before its own parse and forgotten just
 * after it succeeds, so only the message being parsed when the process dies gains an attempt.
 */
import type { ControlStore, KeyedStore, MessageKeys } from '../store/types.js';

export const POISON_CODE = 'MAILGATE_ERR_INTAKE_POISON';

export interface PoisonGuard {
  readonly poisonAfter: number;
  /** Counts one attempt of each key (one store write); answers each key's attempts, this one included. */
  count(route: string, keys: readonly string[]): Promise<Map<string, number>>;
  /** Counts a first attempt of each key never counted (one store write); answers those keys. */
  begin(route: string, keys: readonly string[]): Promise<Set<string>>;
  /**
   * `begin` for the messages the route holds nothing of, in the store call that finds those it
   * holds (`KeyedStore.findKeysAndBegin`): a pulled call's one round trip before its parse.
   */
  lookUp(route: string, messages: readonly MessageKeys[]): Promise<{ found: Map<string, number>; begun: Set<string> }>;
  /** Forgets the attempts of keys now stored (best effort: a leftover count only matters if the message comes back). */
  forget(route: string, keys: readonly string[]): Promise<void>;
  /**
   * `forget` for a caller that does not wait for it (push): the keys of FORGET_LATER_MS are
   * forgotten in one write. Only the counts of mail already stored wait: a crash in that
   * window leaves counts a message's return would find (one more attempt, as for any leftover).
   */
  forgetLater(route: string, keys: readonly string[]): void;
}

/** How long `forgetLater` gathers keys before it writes them, in ms. */
export const FORGET_LATER_MS = 100;
/** Keys `forgetLater` gathers at most before it writes them at once. */
const FORGET_LATER_KEYS = 1_000;

export function poisonGuard(
  store: Pick<ControlStore, 'countParseAttempts' | 'beginParseAttempts' | 'clearParseAttempts'> & Pick<KeyedStore, 'findKeysAndBegin'>,
  poisonAfter: number,
): PoisonGuard {
  const begin = coalesced((route, keys) => store.beginParseAttempts(route, keys));
  const forget = coalesced((route, keys) => store.clearParseAttempts(route, keys));
  const later = coalesced((route, keys) => store.clearParseAttempts(route, keys), { ms: FORGET_LATER_MS, keys: FORGET_LATER_KEYS });
  return {
    poisonAfter,
    begin: (route, keys) => (keys.length === 0 ? Promise.resolve(new Set()) : begin(route, keys)),
    lookUp: (route, messages) => store.findKeysAndBegin(route, messages),
    count: (route, keys) => (keys.length === 0 ? Promise.resolve(new Map()) : store.countParseAttempts(route, keys)),
    forget: async (route, keys) => {
      if (keys.length === 0) return;
      await forget(route, keys).catch(() => undefined);
    },
    forgetLater: (route, keys) => {
      if (keys.length > 0) later(route, keys).catch(() => undefined);
    },
  };
}

/**
 * One store write for the calls of one route made in the same turn of the event loop: concurrent
 * pushes (one message a request) then share a write, as they share their commit. Each caller
 * gets the whole write's answer. With `wait`, the calls of `wait.ms` share it (or fewer, once
 * `wait.keys` keys are gathered); the timer does not hold a stopping process.
 */
function coalesced<R>(
  write: (route: string, keys: readonly string[]) => Promise<R>,
  wait?: { ms: number; keys: number },
): (route: string, keys: readonly string[]) => Promise<R> {
  const pending = new Map<string, { keys: string[]; done: Promise<R>; now: () => void }>();
  return (route, keys) => {
    const joined = pending.get(route);
    if (joined !== undefined) {
      joined.keys.push(...keys);
      if (wait !== undefined && joined.keys.length >= wait.keys) joined.now();
      return joined.done;
    }
    const batch = { keys: [...keys], done: undefined as unknown as Promise<R>, now: (): void => undefined };
    const turn = new Promise<void>((resolve) => {
      if (wait === undefined) return void setImmediate(resolve);
      const timer = setTimeout(resolve, wait.ms).unref();
      batch.now = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    batch.done = turn.then(() => {
      pending.delete(route);
      return write(route, batch.keys);
    });
    pending.set(route, batch);
    if (wait !== undefined && batch.keys.length >= wait.keys) batch.now();
    return batch.done;
  };
}

/** True when a message counted `attempts` times (this one included) is not to be parsed again. */
export function isPoison(attempts: number, poisonAfter: number): boolean {
  return attempts > poisonAfter;
}

/** The dead-letter reason of a message set aside. */
export function poisonFailure(poisonAfter: number, last?: string): { code: string; message: string } {
  const why = last === undefined ? 'it killed its parse worker or the process each time' : `the last: ${last}`;
  return { code: POISON_CODE, message: `set aside after ${poisonAfter} parse attempts (${why}); the raw bytes are kept` };
}
