/**
 * .msg conversion off the reading thread, under a time and heap budget: the structure check
 * (cfb.ts) refuses the corrupt files known to make the Outlook reader loop, and the worker's
 * budgets bound whatever else a hostile file may find in it. Either way the file becomes a
 * coded failure (MAILGATE_ERR_INPUT_MSG_INVALID) and the reading goes on.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { GatewayError } from '../errors.js';
import { DEFAULT_PARSE_TIMEOUT_MS, parseLimit } from '../limits.js';
import { msgToRfc822 } from './msg.js';

export interface MsgBudget {
  /** Wall time of one conversion in ms (default DEFAULT_PARSE_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** Heap of the converting worker in MiB. */
export const MSG_WORKER_MEMORY_MB = 256;

const WORKER_URL = new URL('./msg-worker.js', import.meta.url);

function invalid(name: string, why: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_INPUT_MSG_INVALID', `${name} is not a readable Outlook .msg file: ${why}`);
}

interface Reply {
  id: number;
  ok: boolean;
  raw?: Uint8Array;
  message?: string;
}

/** One worker, started on first use and kept (unreferenced) for the next file; replaced after a failure. */
let worker: Worker | undefined;
let nextId = 1;
/** Conversions run one after the other: each waits for the one before. */
let queue: Promise<unknown> = Promise.resolve();

function converter(): Worker {
  if (worker === undefined) {
    worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: MSG_WORKER_MEMORY_MB } });
    worker.unref();
  }
  return worker;
}

function retire(w: Worker): void {
  if (worker === w) worker = undefined;
  w.removeAllListeners();
  w.on('error', () => undefined);
  void w.terminate();
}

function convertInWorker(bytes: Buffer, name: string, timeoutMs: number): Promise<Buffer> {
  const w = converter();
  const id = nextId++;
  return new Promise<Buffer>((resolve, reject) => {
    const done = (fail: GatewayError | undefined, raw?: Buffer) => {
      clearTimeout(timer);
      w.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (fail) reject(fail);
      else resolve(raw!);
    };
    const timer = setTimeout(() => {
      retire(w);
      done(invalid(name, `the conversion took longer than the ${timeoutMs} ms budget`));
    }, timeoutMs);
    const onMessage = (m: Reply) => {
      if (m.id !== id) return;
      if (m.ok) done(undefined, Buffer.from(m.raw!.buffer, m.raw!.byteOffset, m.raw!.byteLength));
      else done(new GatewayError('MAILGATE_ERR_INPUT_MSG_INVALID', m.message!));
    };
    const onError = (err: Error) => {
      retire(w);
      done(invalid(name, `the conversion failed: ${err.message}`));
    };
    const onExit = (code: number) => {
      retire(w);
      done(invalid(name, `the conversion stopped (exit code ${code})`));
    };
    w.on('message', onMessage).on('error', onError).on('exit', onExit);
    w.postMessage({ id, bytes, name });
  });
}

/**
 * Converts a .msg file's bytes to RFC 5322 bytes in a worker with a heap limit and a time
 * budget; rejects with MAILGATE_ERR_INPUT_MSG_INVALID. Where the compiled worker is absent (the
 * TypeScript sources run directly, as in unit tests) it converts on the calling thread.
 */
export async function convertMsg(bytes: Buffer, name: string, budget: MsgBudget = {}): Promise<Buffer> {
  const timeoutMs = parseLimit('timeoutMs', budget.timeoutMs, DEFAULT_PARSE_TIMEOUT_MS);
  if (!existsSync(fileURLToPath(WORKER_URL))) return msgToRfc822(bytes, name);
  const run = queue.then(() => convertInWorker(bytes, name, timeoutMs));
  queue = run.catch(() => undefined);
  return run;
}
