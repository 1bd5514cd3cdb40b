/**
 * The PST/OST reader off the reading thread (the server's, on an upload; the CLI's on
 * `import`): readPst runs in a worker with a heap limit, and each item it loads has a time
 * budget (opening the file, its own). An item that runs over either is a coded failure at its
 * position, the worker is replaced and reading resumes after that item (the position is the
 * reader's resume point), so one hostile item costs one item, never a stalled process. After
 * MAX_RESTARTS such items the rest of the file is given up, with a failure saying so.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { GatewayError, type ErrorCode } from '../errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_PARSE_TIMEOUT_MS } from '../limits.js';
import { readPst, type PstItem, type PstReadOptions } from './pst.js';
import type { PstWorkerData, PstWorkerMessage, WireItem } from './pst-worker.js';

/** Heap of the reading worker in MiB: the reader's index pages, one folder's contents table, one item. */
export const PST_WORKER_MEMORY_MB = 256;
/** Time to open a file and list its folders, in ms (a multi-GB file reads its folder tables first). */
export const PST_OPEN_TIMEOUT_MS = 60_000;
/** Items a worker that ran over a budget may cost before the rest of the file is given up. */
export const MAX_RESTARTS = 8;
/** Items the worker reads ahead of the reading thread. */
const WINDOW = 16;

export interface PstBudget {
  /** Time to load one item, in ms (default DEFAULT_PARSE_TIMEOUT_MS). */
  itemTimeoutMs?: number;
  /** Time to open the file, in ms (default PST_OPEN_TIMEOUT_MS). */
  openTimeoutMs?: number;
  /** Heap of the worker in MiB (default PST_WORKER_MEMORY_MB). */
  memoryMb?: number;
  /** Tests only (see PstWorkerData). */
  testHooks?: PstWorkerData['testHooks'];
}

const WORKER_URL = new URL('./pst-worker.js', import.meta.url);

type Outcome = { done: true } | { done: false; index: number; why: string };

const revive = (w: WireItem): PstItem => {
  const { raw, error, ...rest } = w;
  if (error === undefined) return { ...rest, raw: Buffer.from(raw!.buffer, raw!.byteOffset, raw!.byteLength) };
  const details = error.details === undefined ? {} : { details: error.details };
  return { ...rest, error: new GatewayError(error.code as ErrorCode, error.message, details) };
};

/** One worker's run from `resumeIndex`: its items, then how it ended. */
async function* run(
  file: string,
  resumeIndex: number,
  options: Omit<PstReadOptions, 'onStep'>,
  budget: PstBudget,
): AsyncGenerator<PstItem, Outcome> {
  const position = new SharedArrayBuffer(4);
  const at = new Int32Array(position);
  at[0] = -1;
  const data: PstWorkerData = {
    file,
    maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    resumeIndex,
    window: WINDOW,
    position,
    ...(budget.testHooks && { testHooks: budget.testHooks }),
  };
  const memoryMb = budget.memoryMb ?? PST_WORKER_MEMORY_MB;
  const worker = new Worker(WORKER_URL, { workerData: data, resourceLimits: { maxOldGenerationSizeMb: memoryMb } });
  const queue: PstWorkerMessage[] = [];
  let stopped: string | undefined;
  let notify: (() => void) | undefined;
  worker.on('message', (m: PstWorkerMessage) => (queue.push(m), notify?.()));
  worker.on('error', (err: Error & { code?: string }) => {
    stopped ??= err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `it needed more than the reader's ${memoryMb} MiB heap` : err.message;
    notify?.();
  });
  worker.on('exit', (code) => ((stopped ??= `the reader stopped (exit code ${code})`), notify?.()));
  try {
    for (;;) {
      const m = queue.shift();
      if (m === undefined) {
        if (stopped !== undefined) return { done: false, index: Atomics.load(at, 0), why: stopped };
        const opening = Atomics.load(at, 0) < 0;
        const ms = opening ? (budget.openTimeoutMs ?? PST_OPEN_TIMEOUT_MS) : (budget.itemTimeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS);
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await new Promise<boolean>((resolve) => {
          notify = () => resolve(false);
          timer = setTimeout(() => resolve(true), ms);
        });
        clearTimeout(timer);
        notify = undefined;
        if (timedOut && queue.length === 0 && stopped === undefined) {
          return { done: false, index: Atomics.load(at, 0), why: `${opening ? 'opening it' : 'it'} took longer than the ${ms} ms budget` };
        }
        continue;
      }
      if (m.type === 'end') return { done: true };
      if (m.type === 'skip') {
        options.onSkip?.(m.path, m.reason);
        continue;
      }
      yield revive(m.item);
      worker.postMessage({ take: 1 });
    }
  } finally {
    worker.removeAllListeners();
    worker.on('error', () => undefined);
    void worker.terminate();
  }
}

const failure = (index: number, message: string): PstItem => ({
  index,
  offset: 0,
  next: { index: index + 1, offset: 0 },
  error: new GatewayError('MAILGATE_ERR_INPUT_PST_INVALID', message),
});

/**
 * Reads a PST/OST file as readPst does, in a worker under the budgets. Where the compiled
 * worker is absent (the TypeScript sources run directly, as in unit tests) it reads on the
 * calling thread.
 */
export async function* readPstOffThread(
  file: string,
  options: Omit<PstReadOptions, 'onStep'> = {},
  budget: PstBudget = {},
): AsyncGenerator<PstItem> {
  if (!existsSync(fileURLToPath(WORKER_URL))) {
    yield* readPst(file, options);
    return;
  }
  let from = options.resume?.index ?? 0;
  for (let restarts = 0; ; restarts++) {
    const outcome = yield* run(file, from, options, budget);
    if (outcome.done) return;
    if (outcome.index < 0) {
      yield failure(from, `${file} cannot be opened as an Outlook PST/OST file: ${outcome.why}`);
      return;
    }
    yield failure(outcome.index, `item ${outcome.index} of ${file} cannot be read: ${outcome.why}`);
    from = outcome.index + 1;
    if (restarts + 1 >= MAX_RESTARTS) {
      const message = `the rest of ${file} from item ${from} is not read: ${MAX_RESTARTS} items ran over the reader's budgets`;
      yield failure(from, message);
      return;
    }
  }
}
