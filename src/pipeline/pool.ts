/**
 * The parse pool (DESIGN.md "Parsing safety"): `previewSync` in worker threads with a size
 * budget checked before dispatch and a time budget per message.
 *
 * Messages travel to a worker in batches (one postMessage for up to `batchSize` messages), so
 * the main thread pays one hand-over per batch, not per message. Two batches of any size may be
 * in flight per worker, and more full ones while the queue has them (up to
 * `MAX_BATCHES_PER_WORKER` and `MAX_WORKER_BYTES`): the main thread often runs for tens of ms
 * without answering a worker (a store commit, a long IMAP response), and a worker holding only
 * two batches then sits idle for most of that time. Each worker
 * publishes the id of the message it is parsing in a shared counter; a watchdog terminates a
 * worker whose current message has run over the time budget (MAILGATE_ERR_MIME_TIMEOUT) and
 * one that dies mid-message gives MAILGATE_ERR_MIME_WORKER_CRASHED. Either way only that
 * message fails: the others of its batches go back to the front of the queue, because the
 * pool keeps every message's bytes until it is settled, and a fresh worker takes the dead
 * one's place (the pool never closes for a message). When the pool cannot tell which message
 * killed the worker (it died between messages), each one it held is parsed again alone, on a
 * worker holding nothing else, so the next death names its message. The queue is bounded by
 * count and bytes: `submit` waits for room.
 */
import nodeModule from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { GatewayError, type ErrorCode } from '../errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_PARSE_TIMEOUT_MS, parseLimit } from '../limits.js';
import type { PreviewOptions, PreviewResult } from '../preview/types.js';
import { unpackEncoded, type EncodedPreview, type EncodedWire } from './encoded.js';
import { WARM_UP_MESSAGES } from './warm-up.js';
import type { WorkerBatch, WorkerData, WorkerResponse } from './worker.js';

/** Same value as worker.ts WORKER_READY (not imported: that module is the worker's entry). */
const WORKER_READY = 'mailgate:worker-ready';

export interface ParsePoolOptions {
  /** Worker threads (default DEFAULT_POOL_SIZE: one core fewer than available, at least 1). */
  size?: number;
  /** Time budget per message in ms (default DEFAULT_PARSE_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Size budget per message in bytes, checked before dispatch (default DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** Messages waiting for a worker before `submit` blocks (default 2 × batchSize × size). */
  queueSize?: number;
  /** Messages per hand-over to a worker, at most (default 16; 1 sends each message alone). */
  batchSize?: number;
  /** Preview options applied to every message (per-message options override them). */
  preview?: PreviewOptions;
  /** Heap limit of each worker in MiB (default 512); running out counts as a crash. */
  workerMemoryMb?: number;
  /**
   * Each worker parses built-in sample messages (warm-up.ts) while it waits for its first batch
   * (default false): a long-running service's first mail then costs what later mail does. A
   * one-shot command, whose workers get messages at once, would only pay for it.
   */
  warmUp?: boolean;
  /** Internal: enables the worker's test hooks (see WorkerData). */
  testHooks?: boolean;
}

export type ParseOutcome = { ok: true; result: PreviewResult } | { ok: false; error: GatewayError };

export interface SubmitOptions {
  options?: PreviewOptions;
  /**
   * Hand the bytes over (default false): the caller's buffer is then detached (length 0),
   * unless it is a slice of a larger buffer. Either way the pool reads the bytes only until
   * the message is settled and never writes them.
   */
  transfer?: boolean;
  /**
   * Parse on a worker holding no other message (default false): for a message that killed its
   * worker before, so that if it does again no other message is lost with it.
   */
  alone?: boolean;
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
  /** Handed over in a batch of its own, to a worker holding nothing else. */
  alone: boolean;
  resolve: (outcome: ParseOutcome) => void;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded its modules and takes messages. */
  ready: boolean;
  /** Jobs handed over and not answered, in the order the worker parses them. */
  inFlight: Job[];
  /** Batches handed over and not answered. */
  batches: number;
  /** Raw bytes of those batches. */
  bytes: number;
  /** [0]: id of the message the worker is parsing, 0 between messages (written by the worker). */
  current: Int32Array;
  /** The watchdog's last look: which id was current, and since when (ms). */
  seenId: number;
  seenAt: number;
}

/**
 * Young-generation cap of each worker in MiB: parsing allocates many short-lived objects, and
 * V8's default (up to 48 MiB per isolate) mostly adds resident memory, not speed.
 */
const WORKER_YOUNG_GENERATION_MB = 8;

/** Consecutive deaths of idle workers after which the pool gives up (a broken worker script). */
const MAX_IDLE_DEATHS = 5;

/** Batches in flight per worker of any size: one being parsed, one waiting (it also sizes the queue). */
const BATCHES_PER_WORKER = 2;

/**
 * Batches in flight per worker at most: beyond BATCHES_PER_WORKER, only full ones (and within
 * MAX_WORKER_BYTES). A store commit runs on the main thread for tens of ms (500 messages of an
 * import); what the worker holds when it starts is all it can parse meanwhile.
 */
const MAX_BATCHES_PER_WORKER = 32;

/** Raw bytes per hand-over, at most (a larger message goes alone). */
const BATCH_BYTES = 4 * 1024 * 1024;

/** Raw bytes in flight per worker beyond which no batch past the first BATCHES_PER_WORKER is added. */
const MAX_WORKER_BYTES = BATCH_BYTES;

/** Raw bytes waiting in the queue before `submit` blocks (one message always fits). */
const QUEUE_BYTES = 64 * 1024 * 1024;

export const DEFAULT_BATCH_SIZE = 16;

/** Heap limit of a parse worker in MiB by default. */
const DEFAULT_WORKER_MEMORY_MB = 512;

const WORKER_URL = new URL('./worker.js', import.meta.url);

/**
 * A worker thread does not share the compile cache its process turned on (`mailgate` does, in
 * main.ts): it gets one of its own, in a folder of the process's, through its environment, so
 * that it too loads its modules without compiling them again from the second run on.
 */
function workerEnv(): NodeJS.ProcessEnv | undefined {
  const dir = nodeModule.getCompileCacheDir?.();
  return dir === undefined ? undefined : { ...process.env, NODE_COMPILE_CACHE: join(dir, 'parse-worker') };
}

function newWorker(data: WorkerData, memoryMb: number): Worker {
  const env = workerEnv();
  return new Worker(WORKER_URL, {
    workerData: data,
    resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    ...(env === undefined ? {} : { env }),
  });
}

/** A parse worker started before its pool (`startParseWorker`). */
interface Spare {
  worker: Worker;
  current: SharedArrayBuffer;
  /** It has loaded its modules. */
  ready: boolean;
  /** It failed or exited before a pool took it. */
  dead: boolean;
  /** Removes the listeners set while it waits for its pool (Worker keeps listeners of its own). */
  forget: () => void;
}

let spare: Spare | undefined;

/**
 * Starts one parse worker now, before the pool that will use it exists: a process that knows
 * from its first line that it will parse (`mailgate import`) lets the worker load its modules
 * while the main thread loads its own, opens the store and reads. It does not warm up on the
 * sample messages (warm-up.ts): an import's first batch follows within a second, and parsing
 * 300 samples first cost a 10,000-message import 8-11 µs of worker CPU per message without
 * making it any faster. The next pool without test hooks and with the default heap limit takes
 * it as its first worker; until then it does not keep the process alive. Once per process.
 */
export function startParseWorker(): void {
  if (spare !== undefined) return;
  const current = new SharedArrayBuffer(4);
  const worker = newWorker({ testHooks: false, current }, DEFAULT_WORKER_MEMORY_MB);
  const onMessage = (m: unknown) => void (m === WORKER_READY && (s.ready = true));
  const onEnd = () => void (s.dead = true);
  const forget = () => {
    worker.off('message', onMessage);
    worker.off('error', onEnd);
    worker.off('exit', onEnd);
  };
  const s: Spare = { worker, current, ready: false, dead: false, forget };
  worker.on('message', onMessage);
  worker.on('error', onEnd);
  worker.on('exit', onEnd);
  worker.unref();
  spare = s;
}

/**
 * Parse workers by default: one core fewer than the machine has (at least one), because the
 * main thread — reading, storing, delivering — keeps a core busy itself. Measured on two cores,
 * one worker imports and previews faster than two (docs/parsing.md, "Worker pool").
 */
export const DEFAULT_POOL_SIZE = Math.max(1, availableParallelism() - 1);

/**
 * The caller's bytes, kept by reference until the message is settled (callers never modify a
 * message they submitted). With `transfer`, a view that owns its whole buffer is detached from
 * the caller (moved, not copied), so nothing else can hold on to it.
 */
function taken(raw: Uint8Array, transfer: boolean): Uint8Array {
  const whole = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength && raw.buffer instanceof ArrayBuffer;
  if (!transfer || !whole) return raw;
  return new Uint8Array(structuredClone(raw.buffer as ArrayBuffer, { transfer: [raw.buffer as ArrayBuffer] }));
}

/**
 * Whether the slot's worker holds a message to be parsed alone. Such a message goes in a batch of
 * its own, only to a worker holding nothing, and that worker takes nothing else until it has
 * answered (pumpOnce): so it is then the only message the worker holds. Checked at every
 * hand-over, so in constant time (a worker may hold hundreds of messages).
 */
function holdsAlone(slot: Slot): boolean {
  return slot.inFlight.length === 1 && slot.inFlight[0]!.alone;
}

const fail = (code: ErrorCode, message: string): ParseOutcome => ({ ok: false, error: new GatewayError(code, message) });

export class ParsePool {
  readonly size: number;
  readonly timeoutMs: number;
  readonly maxMessageBytes: number;
  readonly queueSize: number;
  readonly batchSize: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private queuedBytes = 0;
  /** Submitters waiting for room, first come first served. */
  private readonly roomWaiters: Array<() => void> = [];
  /** Waiters woken and not yet queued: room is kept for them, so each wake-up admits one message. */
  private admitted = 0;
  private readonly watchdog: NodeJS.Timeout;
  private nextId = 1;
  private idleDeaths = 0;
  private closed = false;

  constructor(private readonly options: ParsePoolOptions = {}) {
    this.size = parseLimit('size', options.size, DEFAULT_POOL_SIZE);
    this.timeoutMs = parseLimit('timeoutMs', options.timeoutMs, DEFAULT_PARSE_TIMEOUT_MS);
    this.maxMessageBytes = parseLimit('maxMessageBytes', options.maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES, { min: 0 });
    this.batchSize = parseLimit('batchSize', options.batchSize, DEFAULT_BATCH_SIZE);
    this.queueSize = parseLimit('queueSize', options.queueSize, BATCHES_PER_WORKER * this.batchSize * this.size);
    parseLimit('workerMemoryMb', options.workerMemoryMb, DEFAULT_WORKER_MEMORY_MB);
    const early = this.adopt();
    if (early !== undefined) this.slots.push(early);
    while (this.slots.length < this.size) this.slots.push(this.spawn());
    // A budget is enforced within a tenth of itself (at least 5 ms, at most 250 ms late).
    this.watchdog = setInterval(() => this.inspect(), Math.min(250, Math.max(5, Math.floor(this.timeoutMs / 10))));
    this.watchdog.unref();
  }

  /** Messages in flight plus waiting: how far ahead an ordered reader may run. */
  get capacity(): number {
    return this.size * BATCHES_PER_WORKER * this.batchSize + this.queueSize;
  }

  /** Queues a message, waiting while the queue is full; the ticket settles with its outcome. */
  async submit(raw: Uint8Array, submit: SubmitOptions = {}): Promise<ParseTicket> {
    return this.enqueue(raw, submit, false);
  }

  private async enqueue(raw: Uint8Array, submit: SubmitOptions, encode: boolean): Promise<ParseTicket> {
    if (this.closed) return { done: Promise.resolve(fail('MAILGATE_ERR_MIME_POOL_CLOSED', 'the parse pool is closed')) };
    if (raw.byteLength > this.maxMessageBytes) {
      const message = `the message has ${raw.byteLength} bytes, more than the ${this.maxMessageBytes}-byte budget`;
      return { done: Promise.resolve(fail('MAILGATE_ERR_MIME_TOO_LARGE', message)) };
    }
    if ((this.full() || this.roomWaiters.length > 0) && !this.closed) {
      const room = new Promise<void>((r) => this.roomWaiters.push(r));
      this.admit();
      await room;
      this.admitted--;
    }
    const options = { ...this.options.preview, maxMessageBytes: this.maxMessageBytes, ...submit.options };
    const bytes = taken(raw, submit.transfer ?? false);
    let resolve!: (o: ParseOutcome) => void;
    const done = new Promise<ParseOutcome>((r) => (resolve = r));
    if (this.closed) resolve(fail('MAILGATE_ERR_MIME_POOL_CLOSED', 'the parse pool is closed'));
    else {
      this.queue.push({ id: this.nextId++, raw: bytes, options, encode, alone: submit.alone === true, resolve });
      this.queuedBytes += bytes.byteLength;
      this.pump();
    }
    return { done };
  }

  private full(): boolean {
    const waiting = this.queue.length + this.admitted;
    return waiting >= this.queueSize || (waiting > 0 && this.queuedBytes >= QUEUE_BYTES);
  }

  /** Wakes as many waiting submitters as there is room for (each then queues one message). */
  private admit(): void {
    while (this.roomWaiters.length > 0 && !this.full()) {
      this.admitted++;
      this.roomWaiters.shift()!();
    }
  }

  /** Parses one message; rejects with the GatewayError of a failure. The caller keeps the bytes. */
  async parse(raw: Uint8Array, options?: PreviewOptions): Promise<PreviewResult> {
    const outcome = await (await this.submit(raw, { options })).done;
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  }

  /** Like parse(), with the document and preview as JSON text (see EncodedPreview). */
  async parseEncoded(raw: Uint8Array, options?: PreviewOptions, how: Pick<SubmitOptions, 'alone'> = {}): Promise<EncodedPreview> {
    const outcome = await (await this.enqueue(raw, { options, ...how }, true)).done;
    if (!outcome.ok) throw outcome.error;
    return outcome.result as unknown as EncodedPreview;
  }

  /** Terminates the workers; messages still queued or running fail with MAILGATE_ERR_MIME_POOL_CLOSED. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.watchdog);
    this.failQueued('the parse pool was closed');
    await Promise.all(this.slots.map((slot) => this.retire(slot, 'the parse pool was closed')));
  }

  private failQueued(message: string): void {
    for (const job of this.queue.splice(0)) job.resolve(fail('MAILGATE_ERR_MIME_POOL_CLOSED', message));
    this.queuedBytes = 0;
    const waiters = this.roomWaiters.splice(0);
    this.admitted += waiters.length;
    waiters.forEach((r) => r());
  }

  private spawn(): Slot {
    const shared = new SharedArrayBuffer(4);
    const workerData: WorkerData = {
      testHooks: this.options.testHooks === true,
      current: shared,
      ...(this.options.warmUp === true ? { warmUp: WARM_UP_MESSAGES } : {}),
    };
    return this.attach(newWorker(workerData, this.options.workerMemoryMb ?? DEFAULT_WORKER_MEMORY_MB), shared, false);
  }

  /** The worker `startParseWorker` started, when it is alive and has this pool's settings (test hooks, memory; else it is stopped). */
  private adopt(): Slot | undefined {
    const s = spare;
    if (s === undefined || s.dead) return undefined;
    spare = undefined;
    s.forget();
    if (this.options.testHooks === true || (this.options.workerMemoryMb ?? DEFAULT_WORKER_MEMORY_MB) !== DEFAULT_WORKER_MEMORY_MB) {
      s.worker.on('error', () => undefined);
      void s.worker.terminate();
      return undefined;
    }
    s.worker.ref();
    return this.attach(s.worker, s.current, s.ready);
  }

  private attach(worker: Worker, shared: SharedArrayBuffer, ready: boolean): Slot {
    const slot: Slot = { worker, ready, inFlight: [], batches: 0, bytes: 0, current: new Int32Array(shared), seenId: 0, seenAt: 0 };
    worker.on('message', (res: WorkerResponse[] | typeof WORKER_READY) => {
      if (res !== WORKER_READY) return this.onResults(slot, res);
      slot.ready = true;
      this.pump();
    });
    worker.on('error', (err) => this.onDeath(slot, `the parse worker failed: ${err.message}`));
    worker.on('exit', (code) => this.onDeath(slot, `the parse worker exited with code ${code}`));
    return slot;
  }

  /**
   * Hands queued messages to workers: the least busy first, batches sized to share the queue. A
   * message to be parsed alone goes in a batch of its own to an idle worker, which takes nothing
   * else until it has answered. Until all the queue is handed over or every worker is full.
   */
  private pump(): void {
    while (this.pumpOnce());
    this.admit();
  }

  /** Whether a worker can take another batch now: any while it holds fewer than two, else only a full one within its bounds. */
  private takes(slot: Slot, ready: number): boolean {
    if (!slot.ready || holdsAlone(slot)) return false;
    if (slot.batches < BATCHES_PER_WORKER) return true;
    if (slot.batches >= MAX_BATCHES_PER_WORKER || slot.bytes >= MAX_WORKER_BYTES || this.queue[0]?.alone === true) return false;
    return this.queue.length >= this.batchSize * ready;
  }

  /** One round of hand-overs (at most one batch per worker); whether any was made. */
  private pumpOnce(): boolean {
    if (this.closed || this.queue.length === 0) return false;
    const live = this.slots.filter((s) => s.ready).length;
    const ready = this.slots.filter((s) => this.takes(s, live)).sort((a, b) => a.inFlight.length - b.inFlight.length);
    let sent = false;
    for (const slot of ready) {
      if (this.queue.length === 0) break;
      if (this.queue[0]!.alone && slot.inFlight.length > 0) continue;
      const want = Math.min(this.batchSize, Math.max(1, Math.ceil(this.queue.length / ready.length)));
      const batch: Job[] = [];
      let bytes = 0;
      const fits = (next: Job) => batch.length === 0 || (!next.alone && !batch[0]!.alone && bytes + next.raw.byteLength <= BATCH_BYTES);
      while (batch.length < want && this.queue.length > 0 && fits(this.queue[0]!)) {
        const job = this.queue.shift()!;
        bytes += job.raw.byteLength;
        batch.push(job);
      }
      this.queuedBytes -= bytes;
      slot.inFlight.push(...batch);
      slot.batches++;
      slot.bytes += bytes;
      sent = true;
      // One buffer per batch, moved to the worker; the pool keeps the messages' own bytes, so
      // that a batch-mate of a message that kills its worker can be parsed again elsewhere.
      const packed = new Uint8Array(new ArrayBuffer(bytes));
      let offset = 0;
      const messages = batch.map((job) => {
        packed.set(job.raw, offset);
        const m = { id: job.id, offset, length: job.raw.byteLength, options: job.options, ...(job.encode ? { encode: true } : {}) };
        offset += job.raw.byteLength;
        return m;
      });
      const req: WorkerBatch = { bytes: packed.buffer, messages };
      slot.worker.postMessage(req, [packed.buffer]);
    }
    return sent;
  }

  private onResults(slot: Slot, results: WorkerResponse[]): void {
    if (!this.slots.includes(slot)) return;
    this.idleDeaths = 0;
    slot.batches--;
    for (const res of results) {
      const i = slot.inFlight.findIndex((j) => j.id === res.id);
      if (i === -1) continue;
      const [job] = slot.inFlight.splice(i, 1);
      slot.bytes -= job!.raw.byteLength;
      if (!res.ok) job!.resolve(fail(res.code, res.message));
      // `result` is a PreviewResult unless the job asked for an EncodedPreview (parseEncoded), which travels as its EncodedWire.
      else job!.resolve({ ok: true, result: (job!.encode ? unpackEncoded(res.result as EncodedWire) : res.result) as PreviewResult });
    }
    this.pump();
  }

  /** The watchdog: a worker whose current message has been current for longer than the budget is stopped. */
  private inspect(): void {
    const now = performance.now();
    for (const slot of [...this.slots]) {
      const id = Atomics.load(slot.current, 0);
      if (id !== slot.seenId) {
        slot.seenId = id;
        slot.seenAt = now;
      } else if (id !== 0 && now - slot.seenAt >= this.timeoutMs) {
        this.replace(slot, id, fail('MAILGATE_ERR_MIME_TIMEOUT', `parsing took longer than the ${this.timeoutMs} ms budget`));
      }
    }
  }

  private onDeath(slot: Slot, message: string): void {
    if (this.closed || !this.slots.includes(slot)) return;
    const id = Atomics.load(slot.current, 0);
    if (slot.inFlight.length === 0 && ++this.idleDeaths > MAX_IDLE_DEATHS) {
      this.closed = true;
      clearInterval(this.watchdog);
      this.failQueued(`parse workers keep dying: ${message}`);
      return;
    }
    this.replace(slot, id, fail('MAILGATE_ERR_MIME_WORKER_CRASHED', message));
  }

  /**
   * Kills the slot's worker and puts a fresh one in its place: the message being parsed (id
   * `current`, or the only one the worker held) settles with `outcome`, the others it held go
   * back to the front of the queue. When none can be named, each goes back to be parsed alone.
   */
  private replace(slot: Slot, current: number, outcome: ParseOutcome): void {
    const i = this.slots.indexOf(slot);
    if (i === -1) return;
    this.slots[i] = this.spawn();
    const jobs = slot.inFlight.splice(0);
    const culprit = jobs.length === 1 ? jobs[0] : jobs.find((j) => j.id === current);
    const back: Job[] = [];
    for (const job of jobs) {
      if (job === culprit) job.resolve(outcome);
      else {
        if (culprit === undefined) job.alone = true;
        back.push(job);
      }
    }
    this.queue.unshift(...back);
    this.queuedBytes += back.reduce((n, j) => n + j.raw.byteLength, 0);
    void this.retire(slot, outcome.ok ? '' : outcome.error.message);
    this.pump();
  }

  private async retire(slot: Slot, message: string): Promise<void> {
    for (const job of slot.inFlight.splice(0)) job.resolve(fail('MAILGATE_ERR_MIME_POOL_CLOSED', message));
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    await slot.worker.terminate();
  }
}

export interface OrderedOptions<T> extends SubmitOptions {
  /** Preview options of one item (route properties naming its origin, its arrival time), over `options`. */
  optionsOf?: (item: T) => PreviewOptions | undefined;
  /** Messages in flight at most (default: the pool's capacity). */
  window?: number;
  /** Raw bytes of the messages in flight at most, beyond the first (default 64 MiB). */
  windowBytes?: number;
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
  options: OrderedOptions<T> = {},
): AsyncGenerator<{ item: T; outcome?: ParseOutcome }> {
  const window = parseLimit('window', options.window, pool.capacity);
  const windowBytes = parseLimit('windowBytes', options.windowBytes, QUEUE_BYTES);
  const pending: Array<{ item: T; bytes: number; done?: Promise<ParseOutcome> }> = [];
  let bytes = 0;
  const head = async () => {
    const p = pending.shift()!;
    bytes -= p.bytes;
    return { item: p.item, outcome: p.done ? await p.done : undefined };
  };
  for await (const item of items) {
    const raw = rawOf(item);
    const size = raw?.byteLength ?? 0;
    const own = options.optionsOf?.(item);
    const submit = own === undefined ? options : { ...options, options: { ...options.options, ...own } };
    pending.push({ item, bytes: size, done: raw ? (await pool.submit(raw, submit)).done : undefined });
    bytes += size;
    while (pending.length >= window || (pending.length > 1 && bytes >= windowBytes)) yield await head();
  }
  while (pending.length > 0) yield await head();
}
