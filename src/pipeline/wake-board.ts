/**
 * Wake-ups across replicas through the store: a notification (Graph change notification, Gmail
 * Pub/Sub push) may reach a replica that does not read the mailbox it names. That replica
 * signals the mailbox here — a checkpoint `wake:<mailbox key>` written without a lease, since
 * it holds none — and the replica reading the mailbox looks at it between slices of its idle
 * wait (`wake_check_ms`): a value other than the one it last saw runs a round at once.
 */
import { randomUUID } from 'node:crypto';
import type { CheckpointStore } from '../store/contract/ownership.js';
import { sleep } from './sleep.js';

export interface WakeBoard {
  /** Marks the mailbox (`graph:<name>/<user>`, `gmail:<name>/<user>`) as notified. */
  signal(key: string): Promise<void>;
  /** The mailbox's last signal (undefined: never signalled); compare with the last one seen. */
  watch(key: string): Promise<string | undefined>;
  /** Another record of the mailbox (its saved subscriptions), read without a lease. */
  record(key: string): Promise<unknown>;
}

/** Distinguishes this process's signals from another's written in the same millisecond. */
const PROCESS = randomUUID().slice(0, 8);
let counter = 0;

export const wakeKey = (key: string) => `wake:${key}`;

export function createWakeBoard(checkpoints: Pick<CheckpointStore, 'getCheckpoint' | 'setCheckpoint'>): WakeBoard {
  return {
    async signal(key) {
      counter += 1;
      await checkpoints.setCheckpoint(wakeKey(key), { at: Date.now(), n: counter, by: PROCESS });
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

/** The reading replica's side for one mailbox: the last signal seen, and an idle wait that looks at the board. */
export class WakeWatch {
  private seen: string | undefined;

  constructor(
    private readonly board: WakeBoard,
    private readonly key: string,
    private readonly checkMs: number,
  ) {}

  /** The signal as it is now (read when the mailbox starts: its first round reads everything anyway). */
  async baseline(): Promise<void> {
    await this.moved();
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
    return true;
  }
}
