/**
 * The emulator's state: sources, datasets, stored comments (with a thread index), billing
 * and request counters. Every change is an op; with a journal the op is logged before it is
 * applied, and replaying the log applies the same ops, so live and reloaded state agree.
 */
import type { StoredComment } from '../model/index.js';
import type { Journal } from './journal.js';
import type { EmulatorStats } from './types.js';

export interface SourceRecord {
  id: string;
  owner: string;
  name: string;
  title: string;
  description: string;
  language: string;
  should_translate: boolean;
  sensitive_properties: string[];
  created_at: string;
  updated_at: string;
}

export interface DatasetRecord {
  id: string;
  owner: string;
  name: string;
  title: string;
  description: string;
  source_ids: string[];
  model_family: string;
  has_sentiment: boolean;
  created_at: string;
  updated_at: string;
}

export type StateOp = { seq: number } & (
  | { op: 'source'; source: SourceRecord }
  | { op: 'source_delete'; id: string }
  | { op: 'dataset'; dataset: DatasetRecord }
  | { op: 'dataset_delete'; id: string }
  | { op: 'comments'; source_id: string; comments: StoredComment[]; units: number }
  | { op: 'comments_delete'; source_id: string; ids: string[] }
  | { op: 'bill'; units: number }
);
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewStateOp = DistributiveOmit<StateOp, 'seq'>;

export interface Snapshot {
  format: 'mailgate-emulator/1';
  last_seq: number;
  sources: SourceRecord[];
  datasets: DatasetRecord[];
  comments: StoredComment[];
  ai_units: number;
  requests: EmulatorStats['requests'];
}

export class EmulatorState {
  readonly sources = new Map<string, SourceRecord>();
  readonly datasets = new Map<string, DatasetRecord>();
  /** source id -> comment id -> comment */
  readonly comments = new Map<string, Map<string, StoredComment>>();
  /** source id -> thread id -> comment ids */
  private readonly threads = new Map<string, Map<string, Set<string>>>();
  aiUnits = 0;
  requests: EmulatorStats['requests'] = {};
  private commentCount = 0;

  constructor(private readonly journal?: Journal) {}

  /** Loads the journal's snapshot and log, then compacts them into a fresh snapshot. */
  load(): void {
    if (!this.journal) return;
    const { snapshot, ops } = this.journal.open();
    if (snapshot) this.restore(snapshot);
    for (const op of ops) this.apply(op);
    this.journal.compact(this.snapshot());
  }

  private restore(s: Snapshot): void {
    for (const src of s.sources) this.sources.set(src.id, src);
    for (const ds of s.datasets) this.datasets.set(ds.id, ds);
    for (const c of s.comments) this.putComment(c.source_id, c);
    this.aiUnits = s.ai_units;
    this.requests = s.requests;
  }

  snapshot(): Omit<Snapshot, 'last_seq'> {
    const comments: StoredComment[] = [];
    for (const bySource of this.comments.values()) comments.push(...bySource.values());
    return {
      format: 'mailgate-emulator/1',
      sources: [...this.sources.values()],
      datasets: [...this.datasets.values()],
      comments,
      ai_units: this.aiUnits,
      requests: this.requests,
    };
  }

  /** Logs (when persistent) and applies one change. */
  commit(op: NewStateOp): void {
    const stamped = this.journal ? this.journal.append({ ...op, seq: 0 } as StateOp) : ({ ...op, seq: 0 } as StateOp);
    this.apply(stamped);
    if (this.journal?.needsCompaction()) this.journal.compact(this.snapshot());
  }

  private apply(op: StateOp): void {
    switch (op.op) {
      case 'source':
        this.sources.set(op.source.id, op.source);
        break;
      case 'source_delete':
        this.sources.delete(op.id);
        for (const id of [...(this.comments.get(op.id)?.keys() ?? [])]) this.deleteComment(op.id, id);
        this.comments.delete(op.id);
        this.threads.delete(op.id);
        break;
      case 'dataset':
        this.datasets.set(op.dataset.id, op.dataset);
        break;
      case 'dataset_delete':
        this.datasets.delete(op.id);
        break;
      case 'comments':
        for (const c of op.comments) this.putComment(op.source_id, c);
        this.aiUnits += op.units;
        break;
      case 'comments_delete':
        for (const id of op.ids) this.deleteComment(op.source_id, id);
        break;
      case 'bill':
        this.aiUnits += op.units;
        break;
    }
  }

  private putComment(sourceId: string, c: StoredComment): void {
    let bySource = this.comments.get(sourceId);
    if (!bySource) this.comments.set(sourceId, (bySource = new Map()));
    const old = bySource.get(c.id);
    if (old) this.unindex(sourceId, old);
    else this.commentCount += 1;
    bySource.set(c.id, c);
    if (c.thread_id !== undefined) {
      let byThread = this.threads.get(sourceId);
      if (!byThread) this.threads.set(sourceId, (byThread = new Map()));
      let ids = byThread.get(c.thread_id);
      if (!ids) byThread.set(c.thread_id, (ids = new Set()));
      ids.add(c.id);
    }
  }

  private deleteComment(sourceId: string, id: string): void {
    const bySource = this.comments.get(sourceId);
    const old = bySource?.get(id);
    if (!bySource || !old) return;
    this.unindex(sourceId, old);
    bySource.delete(id);
    this.commentCount -= 1;
  }

  private unindex(sourceId: string, c: StoredComment): void {
    if (c.thread_id === undefined) return;
    const byThread = this.threads.get(sourceId);
    const ids = byThread?.get(c.thread_id);
    ids?.delete(c.id);
    if (byThread && ids && ids.size === 0) byThread.delete(c.thread_id);
  }

  comment(sourceId: string, id: string): StoredComment | undefined {
    return this.comments.get(sourceId)?.get(id);
  }

  /** The stored comments of one thread (any order). */
  threadComments(sourceId: string, threadId: string): StoredComment[] {
    const ids = this.threads.get(sourceId)?.get(threadId);
    const bySource = this.comments.get(sourceId);
    if (!ids || !bySource) return [];
    return [...ids].map((id) => bySource.get(id)!);
  }

  /** Counts one answered request (or `dropped`, `truncated`) under its endpoint. */
  count(endpoint: string, status: number | 'dropped' | 'truncated'): void {
    const byStatus = (this.requests[endpoint] ??= {});
    byStatus[String(status)] = (byStatus[String(status)] ?? 0) + 1;
  }

  stats(): EmulatorStats {
    const requests: EmulatorStats['requests'] = {};
    for (const [k, v] of Object.entries(this.requests)) requests[k] = { ...v };
    return { requests, ai_units: this.aiUnits, comments: this.commentCount };
  }

  /** Forgets everything (and, when persistent, writes an empty snapshot). */
  reset(): void {
    this.sources.clear();
    this.datasets.clear();
    this.comments.clear();
    this.threads.clear();
    this.aiUnits = 0;
    this.requests = {};
    this.commentCount = 0;
    this.journal?.compact(this.snapshot());
  }

  close(): void {
    if (!this.journal) return;
    this.journal.compact(this.snapshot());
    this.journal.close();
  }
}
