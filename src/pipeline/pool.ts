/**
 * The parse pool (DESIGN.md "Parsing safety"): `previewSync` in worker threads with a size
 * budget checked before dispatch and a time budget per message. A worker that runs over its
 * budget is terminated and replaced (MAILGATE_ERR_MIME_TIMEOUT); one that dies mid-message
 * gives MAILGATE_ERR_MIME_WORKER_CRASHED. The queue is bounded: `submit` waits for room.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { GatewayError, type ErrorCode } from '../errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_PARSE_TIMEOUT_MS } from '../limits.js';
import type { PreviewOptions, PreviewResult } from '../preview/types.js';
import type { EncodedPreview } from './encoded.js';
import type { WorkerData, WorkerRequest, WorkerResponse } from './worker.js';

/** Same value as worker.ts WORKER_READY (not imported: that module is the worker's entry). */
const WORKER_READY = 'mailgate:worker-ready';

export interface ParsePoolOptions {
  /** Worker threads (default: available cores, at least 1). */
  size?: number;
  /** Time budget per message in ms (default DEFAULT_PARSE_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Size budget per message in bytes, checked before dispatch (default DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** Messages waiting for a worker before `submit` blocks (default 2 × size). */
  queueSize?: number;
  /** Preview options applied to every message (per-message options override them). */
  preview?: PreviewOptions;
  /** Heap limit of each worker in MiB (default 512); running out counts as a crash. */
  workerMemoryMb?: number;
  /** Internal: enables the worker's test hooks (see WorkerData). */
  testHooks?: boolean;
}

export type ParseOutcome = { ok: true; result: PreviewResult } | { ok: false; error: GatewayError };

export interface SubmitOptions {
  options?: PreviewOptions;
  /**
   * Move the bytes to the worker instead of copying them (default false). The caller's buffer
   * is then unusable (detached) unless it was a slice of a shared pool, which is copied anyway.
   */
  transfer?: boolean;
}

/** A submitted message; `done` settles (never rejects) when it is parsed or has failed. */
export interface ParseTicket {
  done: Promise<ParseOutcome>;
}

interface Job {
  id: number;
  raw: Uint8Array;
  options: PreviewOptions;
  encode: boolean;
  resolve: (outcome: ParseOutcome) => void;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded its modules and takes messages. */
  ready: boolean;
  job?: Job;
  timer?: NodeJS.Timeout;
}

/**
 * Young-generation cap of each worker in MiB: parsing allocates many short-lived objects, and
 * V8's default (up to 48 MiB per isolate) mostly adds resident memory, not speed.
 */
const WORKER_YOUNG_GENERATION_MB = 8;

/** Consecutive deaths of idle workers after which the pool gives up (a broken worker script). */
const MAX_IDLE_DEATHS = 5;

function positiveInt(name: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${v}`);
  return v;
}

/** An exact, transferable copy unless the view already owns its whole ArrayBuffer. */
function transferable(raw: Uint8Array, transfer: boolean): Uint8Array {
  const owns = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength && raw.buffer instanceof ArrayBuffer;
  if (transfer && owns) return raw;
  const copy = new Uint8Array(raw.byteLength);
  copy.set(raw);
  return copy;
}

const fail = (code: ErrorCode, message: string): ParseOutcome => ({ ok: false, error: new GatewayError(code, message) });

export class ParsePool {
  readonly size: number;
  readonly timeoutMs: number;
  readonly maxMessageBytes: number;
  readonly queueSize: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private readonly roomWaiters: Array<() => void> = [];
  private readonly workerUrl = new URL('./worker.js', import.meta.url);
  private nextId = 1;
  private idleDeaths = 0;
  private closed = false;

  constructor(private readonly options: ParsePoolOptions = {}) {
    this.size = positiveInt('size', options.size, Math.max(1, availableParallelism()));
    this.timeoutMs = positiveInt('timeoutMs', options.timeoutMs, DEFAULT_PARSE_TIMEOUT_MS);
    this.maxMessageBytes = positiveInt('maxMessageBytes', options.maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES, 0);
    this.queueSize = positiveInt('queueSize', options.queueSize, 2 * this.size);
    positiveInt('workerMemoryMb', options.workerMemoryMb, 512);
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  /** Messages in flight plus waiting: how far ahead an ordered reader may run. */
  get capacity(): number {
    return this.size + this.queueSize;
  }

  /** Queues a message, waiting while the queue is full; the ticket settles with its outcome. */
  async submit(raw: Uint8Array, submit: SubmitOptions = {}): Promise<ParseTicket> {
    return this.enqueue(raw, submit, false);
  }

  private async enqueue(raw: Uint8Array, submit: SubmitOptions, encode: boolean): Promise<ParseTicket> {
    if (this.closed) return { done: Promise.resolve(fail('MAILGATE_ERR_MIME_WORKER_CRASHED', 'the parse pool is closed')) };
    if (raw.byteLength > this.maxMessageBytes) {
      const message = `the message has ${raw.byteLength} bytes, more than the ${this.maxMessageBytes}-byte budget`;
      return { done: Promise.resolve(fail('MAILGATE_ERR_MIME_TOO_LARGE', message)) };
    }
    while (this.queue.length >= this.queueSize && !this.closed) await new Promise<void>((r) => this.roomWaiters.push(r));
    const options = { ...this.options.preview, maxMessageBytes: this.maxMessageBytes, ...submit.options };
    const bytes = transferable(raw, submit.transfer ?? false);
    let resolve!: (o: ParseOutcome) => void;
    const done = new Promise<ParseOutcome>((r) => (resolve = r));
    if (this.closed) resolve(fail('MAILGATE_ERR_MIME_WORKER_CRASHED', 'the parse pool is closed'));
    else {
      this.queue.push({ id: this.nextId++, raw: bytes, options, encode, resolve });
      this.pump();
    }
    return { done };
  }

  /** Parses one message; rejects with the GatewayError of a failure. Copies the bytes (the caller keeps them). */
  async parse(raw: Uint8Array, options?: PreviewOptions): Promise<PreviewResult> {
    const outcome = await (await this.submit(raw, { options })).done;
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  }

  /** Like parse(), with the document and preview as JSON text (see EncodedPreview). */
  async parseEncoded(raw: Uint8Array, options?: PreviewOptions): Promise<EncodedPreview> {
    const outcome = await (await this.enqueue(raw, { options }, true)).done;
    if (!outcome.ok) throw outcome.error;
    return outcome.result as unknown as EncodedPreview;
  }

  /** Terminates the workers; messages still queued or running fail with MAILGATE_ERR_MIME_WORKER_CRASHED. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve(fail('MAILGATE_ERR_MIME_WORKER_CRASHED', 'the parse pool was closed'));
    this.roomWaiters.splice(0).forEach((r) => r());
    await Promise.all(this.slots.map((slot) => this.retire(slot, 'the parse pool was closed')));
  }

  private spawn(): Slot {
    const workerData: WorkerData = { testHooks: this.options.testHooks === true };
    const worker = new Worker(this.workerUrl, { workerData, resourceLimits: { maxOldGenerationSizeMb: this.options.workerMemoryMb ?? 512, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    const slot: Slot = { worker, ready: false };
    worker.on('message', (res: WorkerResponse | typeof WORKER_READY) => {
      if (res !== WORKER_READY) return this.onResult(slot, res);
      slot.ready = true;
      this.pump();
    });
    worker.on('error', (err) => this.onDeath(slot, `the parse worker failed: ${err.message}`));
    worker.on('exit', (code) => this.onDeath(slot, `the parse worker exited with code ${code}`));
    return slot;
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.job || !slot.ready) continue;
      const job = this.queue.shift()!;
      this.roomWaiters.shift()?.();
      slot.job = job;
      slot.timer = setTimeout(() => this.onTimeout(slot), this.timeoutMs);
      const req: WorkerRequest = { id: job.id, raw: job.raw, options: job.options, ...(job.encode ? { encode: true } : {}) };
      slot.worker.postMessage(req, [job.raw.buffer as ArrayBuffer]);
    }
  }

  private onResult(slot: Slot, res: WorkerResponse): void {
    const job = slot.job;
    if (!job || job.id !== res.id) return;
    this.idleDeaths = 0;
    // `result` is a PreviewResult unless the job asked for an EncodedPreview (parseEncoded).
    this.settle(slot, res.ok ? { ok: true, result: res.result as PreviewResult } : fail(res.code, res.message));
    this.pump();
  }

  private onTimeout(slot: Slot): void {
    if (!slot.job) return;
    this.replace(slot, fail('MAILGATE_ERR_MIME_TIMEOUT', `parsing took longer than the ${this.timeoutMs} ms budget`));
  }

  private onDeath(slot: Slot, message: string): void {
    if (this.closed || !this.slots.includes(slot)) return;
    if (!slot.job && ++this.idleDeaths > MAX_IDLE_DEATHS) {
      this.closed = true;
      for (const job of this.queue.splice(0)) job.resolve(fail('MAILGATE_ERR_MIME_WORKER_CRASHED', `parse workers keep dying: ${message}`));
      this.roomWaiters.splice(0).forEach((r) => r());
      return;
    }
    this.replace(slot, fail('MAILGATE_ERR_MIME_WORKER_CRASHED', message));
  }

  /** Settles the slot's job with `outcome`, kills its worker and puts a fresh one in its place. */
  private replace(slot: Slot, outcome: ParseOutcome): void {
    const i = this.slots.indexOf(slot);
    if (i === -1) return;
    this.slots[i] = this.spawn();
    void this.retire(slot, outcome.ok ? '' : outcome.error.message, outcome);
    this.pump();
  }

  private async retire(slot: Slot, message: string, outcome?: ParseOutcome): Promise<void> {
    if (slot.job) this.settle(slot, outcome ?? fail('MAILGATE_ERR_MIME_WORKER_CRASHED', message));
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    await slot.worker.terminate();
  }

  private settle(slot: Slot, outcome: ParseOutcome): void {
    clearTimeout(slot.timer);
    const job = slot.job;
    slot.job = undefined;
    job?.resolve(outcome);
  }
}

export interface OrderedOptions extends SubmitOptions {
  /** Messages in flight at most (default: the pool's capacity). */
  window?: number;
}

/**
 * Parses a stream of items in the pool and yields them with their outcome in submission
 * order. Items without bytes (`rawOf` returns undefined, e.g. read failures) pass through
 * in their place with no outcome.
 */
export async function* parseOrdered<T>(
  pool: ParsePool,
  items: AsyncIterable<T> | Iterable<T>,
  rawOf: (item: T) => Uint8Array | undefined,
  options: OrderedOptions = {},
): AsyncGenerator<{ item: T; outcome?: ParseOutcome }> {
  const window = positiveInt('window', options.window, pool.capacity);
  const pending: Array<{ item: T; done?: Promise<ParseOutcome> }> = [];
  const head = async () => {
    const p = pending.shift()!;
    return { item: p.item, outcome: p.done ? await p.done : undefined };
  };
  for await (const item of items) {
    const raw = rawOf(item);
    pending.push({ item, done: raw ? (await pool.submit(raw, options)).done : undefined });
    while (pending.length >= window) yield await head();
  }
  while (pending.length > 0) yield await head();
}
