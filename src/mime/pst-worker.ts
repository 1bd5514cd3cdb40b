/**
 * Worker entry of the off-thread PST reader (pst-thread.ts): reads one PST/OST file with
 * readPst and posts its items, at most `window` ahead of what the reading thread has taken.
 * The position of the item being loaded is kept in a shared counter, so that the reading
 * thread can name the item that ran over its time budget (or its heap) and resume after it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readPst } from './pst.js';
import type { PstItem } from './pst.js';

export interface PstWorkerData {
  file: string;
  maxMessageBytes: number;
  resumeIndex: number;
  /** Items posted before waiting for the reading thread to take some. */
  window: number;
  /** [0]: position of the item being loaded (-1 while the file is opened). */
  position: SharedArrayBuffer;
  /** Tests only: loading the item at `stallAt` never ends; loading the one at `exhaustHeapAt` fills the heap. */
  testHooks?: { stallAt?: number; exhaustHeapAt?: number };
}

/** An item as it crosses threads: the error as its code, message and details. */
export type WireItem = Omit<PstItem, 'error' | 'raw'> & {
  raw?: Uint8Array;
  error?: { code: string; message: string; details?: Record<string, unknown> };
};

export type PstWorkerMessage = { type: 'item'; item: WireItem } | { type: 'skip'; path: string; reason: string } | { type: 'end' };

const data = workerData as PstWorkerData;
const position = new Int32Array(data.position);
let credit = data.window;
let waiting: (() => void) | undefined;

parentPort!.on('message', (m: { take: number }) => {
  credit += m.take;
  waiting?.();
});

const post = (m: PstWorkerMessage, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(m, transfer);

function wire(item: PstItem): { item: WireItem; transfer: ArrayBuffer[] } {
  const { error, raw, ...rest } = item;
  const out: WireItem = { ...rest };
  const transfer: ArrayBuffer[] = [];
  if (raw !== undefined) {
    // A copy of its own, so that the whole of its buffer can be handed over.
    const own = new Uint8Array(raw);
    out.raw = own;
    transfer.push(own.buffer);
  }
  if (error !== undefined) out.error = { code: error.code, message: error.message, ...(error.details && { details: error.details }) };
  return { item: out, transfer };
}

function misbehave(index: number, hooks: NonNullable<PstWorkerData['testHooks']>): void {
  if (index === hooks.stallAt) for (;;) Atomics.load(position, 0);
  const hoard: unknown[] = [];
  if (index === hooks.exhaustHeapAt) for (;;) hoard.push(new Array(1 << 16).fill(index));
}

const options = {
  maxMessageBytes: data.maxMessageBytes,
  ...(data.resumeIndex > 0 && { resume: { index: data.resumeIndex } }),
  onStep: (index: number) => {
    Atomics.store(position, 0, index);
    if (data.testHooks) misbehave(index, data.testHooks);
  },
  onSkip: (path: string, reason: string) => post({ type: 'skip', path, reason }),
};
for await (const item of readPst(data.file, options)) {
  while (credit <= 0) await new Promise<void>((resolve) => (waiting = resolve));
  waiting = undefined;
  credit -= 1;
  const { item: w, transfer } = wire(item);
  post({ type: 'item', item: w }, transfer);
}
post({ type: 'end' });
