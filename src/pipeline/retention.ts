/**
 * Retention: `mailgate serve` deletes, by age, what the product no longer needs — delivered
 * (and unchanged) items, dead letters when `retention.dead_s` says so, stored predictions, the
 * parse-attempt counts of messages never stored (a process stopped before forgetting them) — a
 * batch per short transaction with the event loop free between batches, so intake and delivery
 * never wait for more than one batch; then SQLite gives the space back (incremental vacuum).
 * The ledger is never pruned: it keeps a message read again after its item was pruned from
 * costing AI units. The thread index loses a thread whole once its newest message is dated more
 * than `retention.threads_s` ago and none of its messages has an item left; that walk goes a
 * bounded number of steps a round and carries on from there the next round (docs/store.md).
 * The wake board's signals (one per notified mailbox) go an hour after they were last written.
 * Each round also folds the search rows and thread index entries enqueues left for later into
 * the console's indexes and the thread index (SQLite, docs/store.md), `FOLD_ROWS` a transaction,
 * so that the next read, and the thread index's pruning, find little left to fold.
 * The first round waits FIRST_ROUND_DELAY_MS after the start (or one interval, when shorter): its
 * batches take the store's write lock turn by turn with intake, and its checkpoint (on a thread
 * of its own on SQLite) writes to the same disk, which at the start would delay every mailbox's
 * first sync.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { RetentionConfig } from '../config/schema.js';
import { isGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { MaintenanceStore, PruneKind, ThreadCursor } from '../store/types.js';
import { sleep } from './sleep.js';
import { WAKE_KEEP_MS, WAKE_PREFIX } from './wake-board.js';

export interface RetentionOptions {
  store: MaintenanceStore;
  retention: RetentionConfig;
  logger: Logger;
  /** The clock ages are measured by, in ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

/** What one round deleted and gave back. */
export interface RetentionRound {
  delivered: number;
  dead: number;
  predictions: number;
  /** Parse-attempt counts of messages not stored, last counted more than `parse_attempts_s` ago. */
  parseAttempts: number;
  /** Thread index rows (messages of whole threads). */
  threads: number;
  /** Search rows folded into the console's indexes (not a deletion). */
  searchRows: number;
  /** Thread index entries folded into the thread index (not a deletion). */
  threadRows: number;
  /** Wake-up signals of notified mailboxes not written for `WAKE_KEEP_MS` (src/pipeline/wake-board.ts). */
  wakeSignals: number;
  /** Bytes given back to the file system (SQLite incremental vacuum). */
  reclaimedBytes: number;
}

export interface Retention {
  /**
   * One round now: every kind of item pruned until nothing older is left (or `signal` aborts),
   * the thread index walked `THREAD_STEPS_PER_ROUND` steps on, then space reclaimed.
   */
  runOnce(signal?: AbortSignal): Promise<RetentionRound>;
  /**
   * A round every `interval_s` until `signal` aborts, the first FIRST_ROUND_DELAY_MS after the
   * start (or one interval, when shorter); a failed round is logged and the next one tries again.
   */
  run(signal: AbortSignal): Promise<void>;
}

/** The age setting of each kind, in seconds (null: kept). */
function ages(r: RetentionConfig): Record<PruneKind, number | null> {
  return { delivered: r.delivered_s, dead: r.dead_s, predictions: r.predictions_s, parseAttempts: r.parse_attempts_s };
}

/**
 * Thread index steps (of `batch` threads each) one round walks at most: the walk is over every
 * thread, not along an age index, so a large index is covered over several rounds (100,000
 * threads at the defaults: 20 rounds) instead of one long round.
 */
export const THREAD_STEPS_PER_ROUND = 10;

/** Search rows a round folds per transaction, the event loop free in between. */
export const FOLD_ROWS = 2_000;

/** How long after the start the first round waits at most (then one every `interval_s`). */
export const FIRST_ROUND_DELAY_MS = 60_000;

export function createRetention(o: RetentionOptions): Retention {
  const now = o.now ?? Date.now;
  const { batch } = o.retention;
  const log = o.logger;
  // Where the walk of the thread index stands between rounds (undefined: at the start).
  let threadCursor: ThreadCursor | undefined;

  async function pruneThreads(ageS: number, signal: AbortSignal | undefined): Promise<number> {
    const before = new Date(now() - ageS * 1000);
    let total = 0;
    for (let step = 0; step < THREAD_STEPS_PER_ROUND && signal?.aborted !== true; step++) {
      const r = await o.store.pruneThreads(before, batch, threadCursor);
      total += r.deleted;
      threadCursor = r.next ?? undefined;
      if (r.next === null) break;
      await yieldToLoop();
    }
    return total;
  }

  /**
   * Runs `step` (one short transaction of at most `limit` rows, answering how many it took) until
   * one takes fewer, the event loop free between steps: intake and delivery take the store first.
   */
  async function inBatches(step: (limit: number) => Promise<number>, limit: number, signal: AbortSignal | undefined): Promise<number> {
    let total = 0;
    while (signal?.aborted !== true) {
      const n = await step(limit);
      total += n;
      if (n < limit) break;
      await yieldToLoop();
    }
    return total;
  }

  function prune(kind: PruneKind, ageS: number, signal: AbortSignal | undefined): Promise<number> {
    const before = new Date(now() - ageS * 1000);
    return inBatches((limit) => o.store.pruneBatch(kind, before, limit), batch, signal);
  }

  function fold(step: (limit: number) => Promise<number>, signal: AbortSignal | undefined): Promise<number> {
    return inBatches(step, FOLD_ROWS, signal);
  }

  function pruneWakeSignals(signal: AbortSignal | undefined): Promise<number> {
    const before = new Date(now() - WAKE_KEEP_MS);
    return inBatches((limit) => o.store.pruneCheckpoints(WAKE_PREFIX, before, limit), batch, signal);
  }

  async function runOnce(signal?: AbortSignal): Promise<RetentionRound> {
    const round: RetentionRound = {
      delivered: 0,
      dead: 0,
      predictions: 0,
      parseAttempts: 0,
      threads: 0,
      searchRows: 0,
      threadRows: 0,
      wakeSignals: 0,
      reclaimedBytes: 0,
    };
    for (const [kind, age] of Object.entries(ages(o.retention)) as Array<[PruneKind, number | null]>) {
      if (age !== null) round[kind] = await prune(kind, age, signal);
    }
    // After the items (a pruned item's waiting row goes with it), before the threads (whose
    // pruning folds what is left in its own transaction).
    round.searchRows = await fold((limit) => o.store.foldSearches(limit), signal);
    round.threadRows = await fold((limit) => o.store.foldThreads(limit), signal);
    // After the items: a thread whose last item was pruned just now can go in the same round.
    if (o.retention.threads_s !== null) round.threads = await pruneThreads(o.retention.threads_s, signal);
    round.wakeSignals = await pruneWakeSignals(signal);
    if (o.retention.reclaim_bytes > 0 && signal?.aborted !== true)
      round.reclaimedBytes = await o.store.reclaimSpace(o.retention.reclaim_bytes);
    return round;
  }

  async function run(signal: AbortSignal): Promise<void> {
    await sleep(Math.min(FIRST_ROUND_DELAY_MS, o.retention.interval_s * 1000), signal);
    while (!signal.aborted) {
      try {
        const r = await runOnce(signal);
        if (r.delivered + r.dead + r.predictions + r.parseAttempts + r.threads + r.wakeSignals + r.reclaimedBytes > 0)
          log.info({ ...r }, 'retention: pruned the store');
      } catch (err) {
        const code = isGatewayError(err) ? err.code : undefined;
        log.warn({ err, code }, 'retention: pruning failed; the next round tries again');
      }
      await sleep(o.retention.interval_s * 1000, signal);
    }
  }

  return { runOnce, run };
}
