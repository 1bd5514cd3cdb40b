/**
 * SQLite retention and space: pruning a few rows per IMMEDIATE transaction (so intake and
 * delivery wait at most one short batch for the write lock), incremental vacuum, and the file's
 * size. The search rows (folded or waiting), attempts and aliases of an item go with it (ON DELETE CASCADE); its
 * document and raw bytes are deleted here. Giving space back runs in short steps and ends with a
 * WAL checkpoint on a thread of its own, so neither holds the event loop for long.
 */
import { statSync } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { checkLimit, spaceProbeRow } from '../common.js';
import type { Backend } from '../compose.js';
import type { MaintenanceStore, PruneKind, StoreStats, ThreadCursor } from '../types.js';
import { checkpointOffThread } from './checkpoint-thread.js';
import type { SqliteConsole } from './console.js';
import type { LightWrites } from './light.js';
import { statement } from './statements.js';
import type { SqliteThreads } from './threads.js';
import type { WalSync } from './wal-sync.js';

/** The ids one prune batch deletes, oldest first, each along its index. */
const SELECT_IDS: Record<PruneKind, string> = {
  // The partial index of delivered items by finished_at: the oldest come first.
  delivered: `SELECT id FROM outbox WHERE status = 'delivered' AND finished_at < @before AND action_due = 0 ORDER BY finished_at LIMIT @limit`,
  // Dead letters are few (the partial index of dead items).
  dead: `SELECT id FROM outbox WHERE status = 'dead' AND finished_at < @before ORDER BY id LIMIT @limit`,
  // A prediction's id grows with its time (an update gets a new id): read at most `limit` rows
  // from the oldest, never the whole table when nothing is old enough.
  predictions: `SELECT id FROM (SELECT id, created_at FROM predictions ORDER BY id LIMIT @limit) WHERE created_at < @before`,
  // Counts of messages never stored: few rows, read whole (no age index on a table written before
  // every parse). `updated_at` is ISO-8601 text, which orders as time.
  parseAttempts: `SELECT route, key FROM parse_attempts WHERE updated_at < @before LIMIT @limit`,
};

/** The next threads of the index after a cursor, with the time of each one's newest message. */
const NEXT_THREADS = `SELECT source, thread_id, MAX(ts_ms) AS newest FROM threads WHERE (source, thread_id) > (@source, @thread)
  GROUP BY source, thread_id ORDER BY source, thread_id LIMIT @limit`;
/** A thread one of whose messages still has an item (the console's search row, by comment id). */
const THREAD_HAS_ITEM = `SELECT 1 FROM threads t JOIN outbox_search s ON s.s_comment_id = lower(t.comment_id)
  WHERE t.source = ? AND t.thread_id = ? LIMIT 1`;

const AUTO_VACUUM = ['none', 'full', 'incremental'] as const;

/**
 * Pages one step of `reclaimSpace` gives back (1 MiB at 8 KiB pages): one short write holds the
 * event loop, as one pruning batch does, however much there is to give back.
 */
export const RECLAIM_STEP_PAGES = 128;

type PruneTx = (kind: PruneKind, before: number, limit: number) => number;
type ThreadsTx = (before: number, limit: number, after: ThreadCursor) => { deleted: number; next: ThreadCursor | null };

/** One prune batch of a kind, in one light IMMEDIATE transaction (./light.ts). */
function pruneTransaction(db: Database.Database, light: LightWrites): PruneTx {
  const select = Object.fromEntries(Object.entries(SELECT_IDS).map(([k, sql]) => [k, db.prepare(sql)])) as Record<
    PruneKind,
    Database.Statement
  >;
  const del = (table: string) => db.prepare(`DELETE FROM ${table} WHERE id IN (SELECT value FROM json_each(?))`);
  const items = [del('outbox_docs'), del('outbox_raw'), del('outbox')];
  const predictions = del('predictions');
  const attempts = db.prepare(`DELETE FROM parse_attempts WHERE (route, key) IN (${SELECT_IDS.parseAttempts})`);
  const tx = db.transaction((kind: PruneKind, before: number, limit: number) => {
    if (kind === 'parseAttempts') return attempts.run({ before: new Date(before).toISOString(), limit }).changes;
    const ids = (select[kind].all({ before, limit }) as Array<{ id: number }>).map((r) => r.id);
    if (ids.length === 0) return 0;
    const json = JSON.stringify(ids);
    if (kind === 'predictions') return predictions.run(json).changes;
    let n = 0;
    for (const stmt of items) n = stmt.run(json).changes;
    return n;
  });
  return (kind, before, limit) => light.run(tx, kind, before, limit);
}

/** The console's search rows, which the thread index's pruning reads all folded. */
type Searches = Pick<SqliteConsole, 'foldSearches' | 'foldAll'>;
/** The thread index's waiting entries, which its pruning reads all folded too. */
type Threads = Pick<SqliteThreads, 'foldThreads' | 'foldAll'>;

/** One batch of old threads without items dropped from the thread index, in one light IMMEDIATE transaction. */
function threadsTransaction(db: Database.Database, search: Searches, index: Threads, light: LightWrites): ThreadsTx {
  const next = db.prepare(NEXT_THREADS);
  const hasItem = db.prepare(THREAD_HAS_ITEM).pluck();
  const dropThread = db.prepare('DELETE FROM threads WHERE source = ? AND thread_id = ?');
  const threads = db.transaction((before: number, limit: number, after: ThreadCursor) => {
    // In the same transaction: an item stored since the last fold keeps its thread too, and an
    // entry written since then counts in its thread's newest message.
    search.foldAll();
    index.foldAll();
    const groups = next.all({ source: after.source, thread: after.threadId, limit }) as Array<{
      source: string;
      thread_id: string;
      newest: number;
    }>;
    let deleted = 0;
    for (const g of groups) {
      if (g.newest < before && hasItem.get(g.source, g.thread_id) === undefined) deleted += dropThread.run(g.source, g.thread_id).changes;
    }
    const last = groups.at(-1);
    return { deleted, next: groups.length < limit || last === undefined ? null : { source: last.source, threadId: last.thread_id } };
  });
  return (before, limit, after) => light.run(threads, before, limit, after);
}

export class SqliteMaintenance implements Backend<MaintenanceStore> {
  /**
   * Compiled at their first use, not when the store opens: the deletes touch every index of the
   * outbox's tables and took a few ms of the opening thread's time in every process, while
   * most (`mailgate import`, `status`) never prune.
   */
  private pruneTx?: PruneTx;
  private threadsTx?: ThreadsTx;
  /** A `reclaimSpace` is under way. */
  private reclaiming = false;

  constructor(
    private readonly db: Database.Database,
    private readonly search: Searches,
    private readonly threads: Threads,
    /**
     * What retention writes commits without syncing the WAL (./light.ts): a batch a power cut
     * takes back is deleted (or folded) again next round.
     */
    private readonly light: LightWrites,
    /** The store's commits and checkpoint rounds: reclaimSpace lets a round run between its steps. */
    private readonly wal?: Pick<WalSync, 'between'>,
  ) {}

  foldSearches(limit: number): number {
    return this.search.foldSearches(checkLimit(limit));
  }

  foldThreads(limit: number): number {
    return this.threads.foldThreads(checkLimit(limit));
  }

  pruneThreads(olderThan: Date, limit: number, after?: ThreadCursor): { deleted: number; next: ThreadCursor | null } {
    this.threadsTx ??= threadsTransaction(this.db, this.search, this.threads, this.light);
    return this.threadsTx(olderThan.getTime(), checkLimit(limit), after ?? { source: '', threadId: '' });
  }

  pruneCheckpoints(prefix: string, olderThan: Date, limit: number): number {
    if (prefix === '') throw new RangeError('pruneCheckpoints needs a key prefix');
    const sql = `DELETE FROM checkpoints WHERE key IN (
      SELECT key FROM checkpoints WHERE substr(key, 1, length(@prefix)) = @prefix AND updated_at < @before LIMIT @limit)`;
    const del = statement(this.db, sql);
    return this.light.run(this.db.transaction(() => del.run({ prefix, before: olderThan.getTime(), limit: checkLimit(limit) }).changes));
  }

  pruneBatch(kind: PruneKind, olderThan: Date, limit: number): number {
    this.pruneTx ??= pruneTransaction(this.db, this.light);
    return this.pruneTx(kind, olderThan.getTime(), checkLimit(limit));
  }

  /**
   * Incremental vacuum in steps of RECLAIM_STEP_PAGES, each its own short write with the event
   * loop free in between, then one checkpoint on a thread of its own (./checkpoint-thread.ts),
   * which gives the pages to the file system. While it runs the connection checkpoints nothing
   * itself (`wal_autocheckpoint` 0, restored after): the steps' frames, and those of intake's
   * writes meanwhile, wait for that one checkpoint rather than each commit past 1000 pages copying
   * them on the event loop. In a store whose commits sync off the event loop, that connection
   * already leaves checkpoints to its rounds (./wal-rounds.ts): the steps then wait for a round
   * whenever the WAL holds ROUND_WAL_BYTES, so it never grows past ROUND_MAX_WAL_BYTES (where a
   * round would checkpoint and truncate it on the event loop). The steps do not sync the WAL: a
   * vacuum lost to a power cut leaves free pages free, and a checkpoint syncs the WAL before it
   * copies from it.
   */
  async reclaimSpace(maxBytes: number): Promise<number> {
    // One at a time: a second call meanwhile would restore the first one's wal_autocheckpoint 0.
    if (this.reclaiming || this.autoVacuum() !== 'incremental') return 0;
    this.reclaiming = true;
    try {
      return await this.reclaimSteps(maxBytes);
    } finally {
      this.reclaiming = false;
    }
  }

  private async reclaimSteps(maxBytes: number): Promise<number> {
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const freePages = () => this.db.pragma('freelist_count', { simple: true }) as number;
    let left = Math.floor(maxBytes / pageSize);
    if (left <= 0 || freePages() === 0) return 0;
    const autoCheckpoint = this.db.pragma('wal_autocheckpoint', { simple: true }) as number;
    const synchronous = this.db.pragma('synchronous', { simple: true }) as number;
    let released = 0;
    this.db.pragma('wal_autocheckpoint = 0');
    try {
      while (left > 0 && this.db.open) {
        const free = freePages();
        const pages = Math.min(free, left, RECLAIM_STEP_PAGES);
        if (pages <= 0) break;
        this.db.pragma('synchronous = NORMAL');
        try {
          this.db.pragma(`incremental_vacuum(${pages})`);
        } finally {
          this.db.pragma(`synchronous = ${synchronous}`);
        }
        released += free - freePages();
        left -= pages;
        await yieldToLoop();
        // A store with checkpoint rounds: one runs as soon as the WAL holds a round's worth.
        await this.wal?.between();
      }
      if (!this.db.memory && this.db.open) await checkpointOffThread(this.db.name);
    } finally {
      if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${autoCheckpoint}`);
    }
    return released * pageSize;
  }

  storeStats(): StoreStats {
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    const file = this.db.memory ? 0 : fileSize(this.db.name) + fileSize(`${this.db.name}-wal`);
    const iso = (ms: number | null | undefined): string | undefined =>
      ms === null || ms === undefined ? undefined : new Date(ms).toISOString();
    const one = (sql: string) => (this.db.prepare(sql).get() as { t: number | null } | undefined)?.t;
    const oldest: StoreStats['oldest'] = {};
    const queued = iso(one(`SELECT enqueued_at AS t FROM outbox WHERE status = 'queued' ORDER BY id LIMIT 1`));
    const delivered = iso(one(`SELECT finished_at AS t FROM outbox WHERE status = 'delivered' ORDER BY finished_at LIMIT 1`));
    const dead = iso(one(`SELECT MIN(finished_at) AS t FROM outbox WHERE status = 'dead'`));
    if (queued !== undefined) oldest.queued = queued;
    if (delivered !== undefined) oldest.delivered = delivered;
    if (dead !== undefined) oldest.dead = dead;
    return { bytes: Math.max(file, pages * pageSize), freeBytes: free * pageSize, autoVacuum: this.autoVacuum(), oldest };
  }

  probeSpace(bytes: number): void {
    const { key, value } = spaceProbeRow(bytes);
    this.db
      .transaction(() => {
        this.db.prepare('INSERT INTO checkpoints (key, value, updated_at) VALUES (?, ?, ?)').run(key, value, Date.now());
        this.db.prepare('DELETE FROM checkpoints WHERE key = ?').run(key);
      })
      .immediate();
  }

  private autoVacuum(): StoreStats['autoVacuum'] {
    return AUTO_VACUUM[this.db.pragma('auto_vacuum', { simple: true }) as number] ?? 'none';
  }
}

function fileSize(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}
