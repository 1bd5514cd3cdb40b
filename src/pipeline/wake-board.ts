/**
 * Wake-ups across replicas through the store: a notification (Graph change notification, Gmail
 * Pub/Sub push) may reach a replica that does not read the mailbox it names. That replica
 * signals the mailbox here — a checkpoint `wake:<mailbox key>` written without a lease, since
 * it holds none — and the replica reading the mailbox looks at it between slices of its idle
 * wait (`wake_check_ms`): a value other than the one it last saw runs a round at once.
 *
 * A signal may carry a note for the reader (a Graph lifecycle event: a subscription to recreate
 * or renew). Notes ride along in the value — a later signal keeps those younger than
 * `NOTE_KEEP_MS`, at most `MAX_NOTES` — and the reader takes each once (`takeNotes`). Two
 * replicas signalling the same mailbox at the same moment may lose one's note; the reader's own
 * renewal then catches what it said, a little later.
 */
import { randomUUID } from 'node:crypto';
import type { CheckpointStore } from '../store/contract/ownership.js';
import { sleep } from './sleep.js';

/** What a signal tells the reader besides "look now": an event about one of its subscriptions. */
export interface WakeNote {
  subscription: string;
  event: string;
}

/** A note as kept on the board: with its writer's id (taken once by the reader) and time. */
interface BoardNote extends WakeNote {
  id: string;
  at: number;
}

interface Signal {
  at: number;
  n: number;
  by: string;
  notes?: BoardNote[];
}

/** How long a note stays on the board for its reader (which looks every `wake_check_ms`). */
export const NOTE_KEEP_MS = 10 * 60_000;
/** Most notes kept per mailbox (the newest). */
export const MAX_NOTES = 16;

export interface WakeBoard {
  /** Marks the mailbox (`graph:<name>/<user>`, `gmail:<name>/<user>`) as notified, with a note for its reader. */
  signal(key: string, note?: WakeNote): Promise<void>;
  /** The mailbox's last signal (undefined: never signalled); compare with the last one seen. Its notes are in `notes` of the JSON. */
  watch(key: string): Promise<string | undefined>;
  /** Another record of the mailbox (its saved subscriptions), read without a lease. */
  record(key: string): Promise<unknown>;
}

/** Distinguishes this process's signals from another's written in the same millisecond. */
const PROCESS = randomUUID().slice(0, 8);
let counter = 0;

/** The keys of the board's signals (a checkpoint per notified mailbox). */
export const WAKE_PREFIX = 'wake:';
/**
 * Signals not written for this long are pruned by retention (src/pipeline/retention.ts): the
 * reader has looked long since (every `wake_check_ms`), their notes are past `NOTE_KEEP_MS`, and
 * a signal removed is as good as one seen — the next one is new either way.
 */
export const WAKE_KEEP_MS = 60 * 60_000;

export const wakeKey = (key: string) => `${WAKE_PREFIX}${key}`;

export function createWakeBoard(checkpoints: Pick<CheckpointStore, 'getCheckpoint' | 'setCheckpoint'>): WakeBoard {
  return {
    async signal(key, note) {
      counter += 1;
      const at = Date.now();
      const value: Signal = { at, n: counter, by: PROCESS };
      // The notes still on the board stay for the reader: a plain signal must not wipe them.
      const kept = notesOf(await checkpoints.getCheckpoint(wakeKey(key))).filter((x) => at - x.at < NOTE_KEEP_MS);
      if (note !== undefined) kept.push({ ...note, id: `${PROCESS}.${counter}`, at });
      if (kept.length > 0) value.notes = kept.slice(-MAX_NOTES);
      await checkpoints.setCheckpoint(wakeKey(key), value as unknown as Record<string, unknown>);
    },
    async watch(key) {
      const v = await checkpoints.getCheckpoint(wakeKey(key));
      return v === undefined || v === null ? undefined : JSON.stringify(v);
    },
    async record(key) {
      return checkpoints.getCheckpoint(key);
    },
  };
}

function notesOf(value: unknown): BoardNote[] {
  const notes = (value as { notes?: unknown } | null | undefined)?.notes;
  return Array.isArray(notes) ? (notes as BoardNote[]).filter((x) => typeof x?.id === 'string' && typeof x.subscription === 'string') : [];
}

/** The reading replica's side for one mailbox: the last signal seen, and an idle wait that looks at the board. */
export class WakeWatch {
  private seen: string | undefined;
  /** The notes of the last signal read, and those already taken. */
  private notes: BoardNote[] = [];
  private taken = new Set<string>();

  constructor(
    private readonly board: WakeBoard,
    private readonly key: string,
    private readonly checkMs: number,
  ) {}

  /** The signal as it is now (read when the mailbox starts: its first round reads everything anyway; its notes are still to take). */
  async baseline(): Promise<void> {
    await this.moved();
  }

  /** The notes of the signals read so far not taken before; each is taken once. */
  takeNotes(): WakeNote[] {
    const fresh = this.notes.filter((x) => !this.taken.has(x.id));
    // Only the ids still on the board need remembering.
    this.taken = new Set(this.notes.map((x) => x.id));
    return fresh.map(({ subscription, event }) => ({ subscription, event }));
  }

  /**
   * Waits up to `ms` (less when `signal` aborts) in slices of `checkMs`, reading the board after
   * each; true as soon as the mailbox was signalled since the last look. A failing read is a slice lost.
   */
  async sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    const until = Date.now() + ms;
    for (let left = ms; left > 0 && !signal.aborted; left = until - Date.now()) {
      await sleep(Math.min(this.checkMs, left), signal);
      if (!signal.aborted && (await this.moved())) return true;
    }
    return false;
  }

  private async moved(): Promise<boolean> {
    let now: string | undefined;
    try {
      now = await this.board.watch(this.key);
    } catch {
      return false;
    }
    if (now === undefined || now === this.seen) return false;
    this.seen = now;
    this.notes = notesOf(JSON.parse(now));
    return true;
  }
}
