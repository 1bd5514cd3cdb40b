/**
 * The store's writes on a thread of their own (`SqliteOptions.writerThread`): a second
 * connection to the store's file, in a worker thread, runs the writes of intake, delivery,
 * ownership and poison counting (concerns.ts WRITER_METHODS) with their usual transactions and
 * commits them there, FULL sync included; the calling thread only hands the arguments over and
 * is answered once the write is durable. One connection writes, so no write waits for the
 * other's lock; writes run one at a time in call order. For a process whose event loop is its
 * bottleneck; no command uses it today (its cost: `SqliteOptions.writerThread`).
 */
import { Worker } from 'node:worker_threads';
import { GatewayError, type ErrorCode } from '../../errors.js';
import { WRITER_METHODS, type SqliteConcerns, type WriterConcern } from './concerns.js';
import { itemsOfClaim, type ClaimedRows } from './outbox.js';
import { toWire, type WriterData, type WriterReply, type WriterRequest } from './writer-wire.js';

const WRITER_URL = new URL('./writer-thread.js', import.meta.url);

/** What every write answers once the thread is gone: the store cannot be reached (as a closed connection). */
const unavailable = (message: string, cause?: unknown): GatewayError =>
  new GatewayError('MAILGATE_ERR_STORE_UNAVAILABLE', message, cause === undefined ? {} : { cause });

interface Waiter {
  resolve: (r: unknown) => void;
  reject: (e: Error) => void;
}

export class SqliteWriter {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiter>();
  private dead: Error | undefined;
  private closing = false;

  /** `clock`: the store's own clock, read at each call and sent along (else the thread reads its own). */
  constructor(
    data: Omit<WriterData, 'clock'>,
    private readonly clock?: () => number,
  ) {
    const workerData: WriterData = { ...data, clock: clock !== undefined };
    this.worker = new Worker(WRITER_URL, { workerData });
    this.worker.on('message', (reply: WriterReply) => this.settle(reply));
    this.worker.on('error', (err) => this.fail(unavailable(`the SQLite writer thread failed: ${err.message}`, err)));
    this.worker.on('exit', (code) => this.fail(unavailable(`the SQLite writer thread exited with code ${code}`)));
  }

  /** `own` with the writes of WRITER_METHODS sent to the thread (the reads stay on `own`'s connection). */
  route(own: SqliteConcerns): SqliteConcerns {
    const out = { ...own } as Record<string, unknown>;
    for (const [concern, methods] of Object.entries(WRITER_METHODS) as Array<[WriterConcern, readonly string[]]>) {
      // The concern itself for every other method (a lazy statement cache may then fill twice: harmless).
      const routed = Object.create(own[concern]) as Record<string, unknown>;
      for (const method of methods) routed[method] = (...args: unknown[]) => this.write(concern, method, args);
      out[concern] = routed;
    }
    const enqueue: SqliteConcerns['keyed']['enqueue'] = (items, checkpoint, fence) => {
      const req = toWire(this.nextId++, items, checkpoint, fence);
      if (this.clock !== undefined) req.now = this.clock();
      return this.call(req, [req.bytes]);
    };
    (out['keyed'] as Record<string, unknown>)['enqueue'] = enqueue;
    return out as SqliteConcerns;
  }

  private async write(concern: WriterConcern, method: string, args: unknown[]): Promise<unknown> {
    const now = this.clock === undefined ? {} : { now: this.clock() };
    const result = await this.call({ id: this.nextId++, op: 'call', concern, method, args, ...now });
    return concern === 'outbox' && method === 'claim' ? itemsOfClaim(result as ClaimedRows) : result;
  }

  private call<T>(req: WriterRequest, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.dead !== undefined) return Promise.reject(this.dead);
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(req.id, { resolve: resolve as (r: unknown) => void, reject });
      this.worker.postMessage(req, transfer);
    });
  }

  private settle(reply: WriterReply): void {
    const w = this.waiting.get(reply.id);
    if (w === undefined) return;
    this.waiting.delete(reply.id);
    if (reply.ok) return w.resolve(reply.result);
    // The thread's error as the store's guard tells errors apart: a GatewayError by its code, a
    // driver error by its SQLite code.
    if (reply.name === 'GatewayError') return w.reject(new GatewayError(reply.code as ErrorCode, reply.message));
    w.reject(Object.assign(new Error(reply.message), { name: reply.name, ...(reply.code === undefined ? {} : { code: reply.code }) }));
  }

  private fail(err: Error): void {
    if (!this.closing) this.dead ??= err;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }

  /** Waits for the writes under way, then closes the thread's connection and ends it. */
  async close(): Promise<void> {
    if (this.dead !== undefined || this.closing) return;
    await Promise.allSettled(
      [...this.waiting.values()].map(
        (w) =>
          new Promise<void>((done) => {
            const { resolve, reject } = w;
            w.resolve = (x) => (resolve(x), done());
            w.reject = (e) => (reject(e), done());
          }),
      ),
    );
    this.closing = true;
    this.dead = unavailable('the SQLite store is closed');
    const exited = new Promise<void>((r) => this.worker.once('exit', () => r()));
    this.worker.postMessage('close');
    await exited;
  }
}
