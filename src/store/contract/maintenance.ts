/**
 * Keeping a long-running store bounded: retention (deleting what the product no longer needs,
 * a few rows per transaction), giving the space back, and what an operator sees of it (size,
 * oldest items, a full disk).
 */

/**
 * What retention deletes by age: delivered (and unchanged) items, dead letters, predictions, and
 * the parse-attempt counts of messages never stored (`parseAttempts`, by when they were last
 * counted).
 */
export type PruneKind = 'delivered' | 'dead' | 'predictions' | 'parseAttempts';

export interface StoreStats {
  /**
   * Bytes the store takes on disk: SQLite, the database file and its WAL; PostgreSQL, mailgate's
   * tables with their indexes and TOAST (not the server's WAL or other databases).
   */
  bytes: number;
  /** Of `bytes`, space inside the store free for reuse (SQLite free pages); absent on PostgreSQL. */
  freeBytes?: number;
  /**
   * SQLite's auto-vacuum mode: `incremental` gives the space of pruned rows back to the file
   * system; `none` (stores created before it was the default) reuses it but never shrinks until
   * converted once (`mailgate store compact`). Absent on PostgreSQL.
   */
  autoVacuum?: 'none' | 'full' | 'incremental';
  /** The oldest item of each status (ISO-8601): queued, when it was stored; delivered and dead, when they became so. */
  oldest: { queued?: string; delivered?: string; dead?: string };
}

/** A write that failed for want of space (SQLITE_FULL, a full disk, PostgreSQL disk_full). */
export interface StoreFull {
  /** When the first such failure happened since the store last wrote successfully (ISO-8601). */
  since: string;
  /** The store method whose write failed. */
  method: string;
  /** The driver's message. */
  message: string;
}

/** Where a walk of the thread index stands: the last thread it looked at, in key order. */
export interface ThreadCursor {
  source: string;
  threadId: string;
}

export interface MaintenanceStore {
  /**
   * Deletes at most `limit` of the oldest items of one kind finished (or, for predictions,
   * written) before `olderThan`, in one short transaction, with their side rows (document, search
   * row, attempts, aliases). Delivered items whose after-delivery action is still due are kept.
   * `parseAttempts`: at most `limit` parse-attempt counts (poison messages, src/pipeline/poison.ts)
   * last counted before `olderThan`, in no particular order — the table has no age index, since
   * it holds only the counts of messages not (yet) stored and is written before every parse.
   * Returns how many were deleted: fewer than `limit` means there is nothing more to prune.
   */
  pruneBatch(kind: PruneKind, olderThan: Date, limit: number): Promise<number>;
  /**
   * Moves at most `limit` of the search rows an enqueue left for later into the console's indexed
   * search table, oldest first, in one transaction; returns how many (fewer than `limit`: none
   * left). The console's reads fold what is left themselves, so this only takes that work off
   * them. PostgreSQL indexes its search rows at enqueue: always 0 there.
   */
  foldSearches(limit: number): Promise<number>;
  /**
   * Moves at most `limit` of the thread index entries an enqueue left for later into the indexed
   * thread index, oldest first, in one transaction; returns how many (fewer than `limit`: none
   * left). The thread index's reads and pruning fold what is left themselves, so this only takes
   * that work off them. PostgreSQL indexes its entries at enqueue: always 0 there.
   */
  foldThreads(limit: number): Promise<number>;
  /**
   * Looks at the next `limit` threads of the thread index after `after` (from the start when
   * absent), in key order (source, thread id), and deletes, each thread whole, those whose newest
   * message is dated before `olderThan` and none of whose messages still has an item in the store
   * (on any route: a queued, delivered or dead item keeps its thread). One short transaction.
   * Returns the index rows deleted and where the walk stands (`null`: it reached the end).
   */
  pruneThreads(olderThan: Date, limit: number, after?: ThreadCursor): Promise<{ deleted: number; next: ThreadCursor | null }>;
  /**
   * Deletes at most `limit` checkpoints whose key starts with `prefix` (non-empty) and that were
   * last written before `olderThan` — the wake board's `wake:` signals, one per notified mailbox —
   * in one short statement. Returns how many: fewer than `limit` means nothing more is left.
   */
  pruneCheckpoints(prefix: string, olderThan: Date, limit: number): Promise<number>;
  /**
   * Gives free space back to the file system, at most `maxBytes` of it (SQLite with incremental
   * auto-vacuum: that many free pages are released, a short write at a time with the event loop
   * free in between, and the WAL is checkpointed on a thread of its own). Returns the
   * bytes released; 0 where the store does not shrink itself (PostgreSQL: autovacuum reuses the
   * space, see docs/store.md).
   */
  reclaimSpace(maxBytes: number): Promise<number>;
  /** Size on disk, free space and the oldest items: cheap (indexes and file sizes only). */
  storeStats(): Promise<StoreStats>;
  /**
   * Writes `bytes` of incompressible data in one committed transaction and deletes it in the
   * same one (no other connection ever sees the row): does a write of that size succeed now?
   * While the store is `full`, the service calls it every few seconds; its success clears `full`
   * (`health()`), so readiness recovers when space returns even when no traffic writes.
   */
  probeSpace(bytes: number): Promise<void>;
}
