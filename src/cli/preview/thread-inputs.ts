/**
 * The compact per-comment inputs of thread properties, kept in memory for the whole run while
 * everything else is spooled to disk: per comment its id, an interned thread id, the timestamp
 * as a number, an interned sender and interned participant addresses, in typed columns (about
 * 140 bytes a comment, ids included). A repeated comment id counts once, the last occurrence
 * wins (as an update would).
 *
 * Thread properties are then computed thread by thread (computeThreadProperties on one group at
 * a time) and stored as a position per comment plus one shared object per thread.
 */
import type { Comment, ThreadProperties } from '../../model/index.js';
import { addressKey, computeThreadProperties } from '../../preview/threads.js';

/** A growable Int32Array / Float64Array. */
class Column<T extends Int32Array | Float64Array> {
  data: T;
  length = 0;
  constructor(private readonly make: (n: number) => T) {
    this.data = make(1024);
  }
  push(v: number): number {
    if (this.length === this.data.length) {
      const next = this.make(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length] = v;
    return this.length++;
  }
}

const ints = () => new Column<Int32Array>((n) => new Int32Array(n));

class Interner {
  private readonly index = new Map<string, number>();
  readonly values: string[] = [];
  of(value: string): number {
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(value);
      this.index.set(value, i);
    }
    return i;
  }
}

type Shared = Omit<ThreadProperties, 'thread_position'>;

export class ThreadInputs {
  /** Comment id → row (a repeated id reuses its row). */
  private readonly row = new Map<string, number>();
  private readonly thread = ints();
  private readonly time = new Column<Float64Array>((n) => new Float64Array(n));
  private readonly sender = ints();
  /** Participant addresses of row r: recipients.data[recipStart[r] .. recipStart[r] + recipCount[r]). */
  private readonly recipStart = ints();
  private readonly recipCount = ints();
  private readonly recipients = ints();
  private readonly threads = new Interner();
  private readonly addresses = new Interner();
  private position: Int32Array = new Int32Array(0);
  private sharedOf: Int32Array = new Int32Array(0);
  private readonly shared: Shared[] = [];

  get size(): number {
    return this.row.size;
  }

  add(comment: Comment): void {
    const m = comment.messages[0];
    const from = addressKey(m?.from);
    const others = [...(m?.to ?? []), ...(m?.cc ?? []), ...(m?.bcc ?? [])].map(addressKey).filter((k): k is string => k !== undefined);
    const start = this.recipients.length;
    for (const a of others) this.recipients.push(this.addresses.of(a));
    const values = [
      comment.thread_id === undefined ? -1 : this.threads.of(comment.thread_id),
      Date.parse(comment.timestamp),
      from === undefined ? -1 : this.addresses.of(from),
      start,
      others.length,
    ] as const;
    const existing = this.row.get(comment.id);
    if (existing !== undefined) {
      this.set(existing, values);
      return;
    }
    this.row.set(comment.id, this.thread.length);
    this.thread.push(values[0]);
    this.time.push(values[1]);
    this.sender.push(values[2]);
    this.recipStart.push(values[3]);
    this.recipCount.push(values[4]);
  }

  private set(r: number, [thread, time, sender, start, count]: readonly [number, number, number, number, number]): void {
    this.thread.data[r] = thread;
    this.time.data[r] = time;
    this.sender.data[r] = sender;
    this.recipStart.data[r] = start;
    this.recipCount.data[r] = count;
  }

  /** A minimal comment for row r: what computeThreadProperties reads (all participants as `to`). */
  private comment(id: string, r: number): Comment {
    const message: Comment['messages'][number] = { body: { text: '' } };
    const s = this.sender.data[r]!;
    if (s >= 0) message.from = this.addresses.values[s]!;
    const start = this.recipStart.data[r]!;
    const count = this.recipCount.data[r]!;
    if (count > 0) message.to = Array.from(this.recipients.data.subarray(start, start + count), (a) => this.addresses.values[a]!);
    const comment: Comment = { id, timestamp: new Date(this.time.data[r]!).toISOString(), messages: [message], user_properties: {} };
    const t = this.thread.data[r]!;
    if (t >= 0) comment.thread_id = this.threads.values[t]!;
    return comment;
  }

  /** Computes the thread properties of every comment, one thread at a time (rows sorted by thread). */
  compute(): void {
    const n = this.row.size;
    const idOf: string[] = new Array<string>(n);
    for (const [id, r] of this.row) idOf[r] = id;
    const thread = this.thread.data;
    const order = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => thread[a]! - thread[b]! || a - b);
    this.position = new Int32Array(n);
    this.sharedOf = new Int32Array(n);
    let start = 0;
    while (start < n) {
      const t = thread[order[start]!]!;
      let end = start + 1;
      if (t >= 0) while (end < n && thread[order[end]!] === t) end++;
      this.computeGroup(order.subarray(start, end), idOf);
      start = end;
    }
  }

  /** One thread (or one comment without a thread id): computeThreadProperties on its rows. */
  private computeGroup(rows: Int32Array, idOf: readonly string[]): void {
    const props = computeThreadProperties(Array.from(rows, (r) => this.comment(idOf[r]!, r)));
    const sharedIndex = this.shared.length;
    let first = true;
    for (const r of rows) {
      const p = props.get(idOf[r]!);
      if (!p) continue;
      const { thread_position, ...rest } = p;
      if (first) this.shared.push(rest);
      first = false;
      this.position[r] = thread_position;
      this.sharedOf[r] = sharedIndex;
    }
  }

  /** Thread properties of a comment after compute(). */
  get(id: string): ThreadProperties | undefined {
    const r = this.row.get(id);
    if (r === undefined || r >= this.sharedOf.length) return undefined;
    const shared = this.shared[this.sharedOf[r]!];
    return shared ? { thread_position: this.position[r]!, ...shared } : undefined;
  }
}
