/**
 * Parse worker: runs `previewSync` for the pool (src/pipeline/pool.ts). Messages arrive in
 * batches and are parsed one at a time, in order; the id of the one being parsed is published
 * in the shared `current` counter for the pool's watchdog, and the batch's answers go back in
 * one message. Errors travel back as `{ code, message }`.
 */
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { isGatewayError, type ErrorCode } from '../errors.js';
import { previewSync, previewWithFacts } from '../preview/index.js';
import type { PreviewOptions, PreviewResult } from '../preview/types.js';
import { encodePreview, packEncoded, type EncodedPreview, type EncodedWire } from './encoded.js';

/** Messages for one hand-over: their bytes back to back in one buffer, moved to the worker. */
export interface WorkerBatch {
  bytes: ArrayBuffer;
  messages: Array<Omit<WorkerRequest, 'raw'> & { offset: number; length: number }>;
}

export interface WorkerRequest {
  id: number;
  raw: Uint8Array;
  options: PreviewOptions;
  /** Answer with an EncodedPreview (JSON text) instead of the PreviewResult objects. */
  encode?: boolean;
}

/** What handleRequest answers; across the hand-over an EncodedPreview travels as its EncodedWire. */
export type WorkerResponse =
  | { id: number; ok: true; result: PreviewResult | EncodedPreview | EncodedWire }
  | { id: number; ok: false; code: ErrorCode; message: string };

/** Sent once the worker's modules are loaded: start-up time never counts against a message's budget. */
export const WORKER_READY = 'mailgate:worker-ready';

export interface WorkerData {
  /** Int32 [0]: id of the message being parsed, 0 between messages (read by the pool's watchdog). */
  current?: SharedArrayBuffer;
  /**
   * Internal, for tests only (never set from the configuration or the command line): a message
   * starting with the line `X-Mailgate-Internal-Test-Hook: hang` spins forever, `: crash` ends
   * the worker thread, `: crash N FILE` ends it the first N times (one byte appended to FILE
   * each time) and parses it after that, `: crash-after-batch` ends it after the batch's last
   * message, before it answers (so the pool cannot tell which message it was).
   */
  testHooks?: boolean;
  /**
   * Sample messages (warm-up.ts) to parse, one per turn of the event loop, until the first batch
   * arrives: the parser's code is then compiled and optimized before real mail needs it.
   */
  warmUp?: number;
}

const HOOK_PREFIX = 'X-Mailgate-Internal-Test-Hook: ';

/** A `crash-after-batch` message was parsed in the batch under way. */
let crashAfterBatch = false;

function runTestHook(raw: Uint8Array): void {
  const head = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, 1024)).toString('latin1');
  if (!head.startsWith(HOOK_PREFIX)) return;
  const [hook, times, file] = head.slice(HOOK_PREFIX.length).split(/\r?\n/, 1)[0]!.split(' ');
  if (hook === 'hang') for (;;);
  if (hook === 'crash-after-batch') crashAfterBatch = true;
  if (hook !== 'crash') return;
  if (file === undefined) process.exit(70);
  // Not imported at the top: a worker without test hooks never loads node:fs's module.
  const { appendFileSync, statSync } = process.getBuiltinModule('node:fs');
  appendFileSync(file, 'x');
  if (statSync(file).size <= Number(times)) process.exit(70);
}

export function handleRequest(req: WorkerRequest, testHooks = false): WorkerResponse {
  try {
    if (testHooks) runTestHook(req.raw);
    if (req.encode !== true) return { id: req.id, ok: true, result: previewSync(req.raw, req.options) };
    const { result, facts } = previewWithFacts(req.raw, req.options);
    return { id: req.id, ok: true, result: encodePreview(result, facts) };
  } catch (err) {
    if (isGatewayError(err)) return { id: req.id, ok: false, code: err.code, message: err.message };
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return { id: req.id, ok: false, code: 'MAILGATE_ERR_MIME_INTERNAL', message };
  }
}

/**
 * Parses the sample messages one per turn of the event loop (a batch arriving meanwhile is
 * served at the next turn), until `count` are done or `stop()` says real work has come.
 */
async function warmUp(count: number, stop: () => boolean): Promise<void> {
  // Loaded here, not at the top: a worker that does not warm up never loads the samples.
  const { warmUpMessage } = await import('./warm-up.js');
  let i = 0;
  const step = () => {
    if (i >= count || stop()) return;
    handleRequest({ id: 0, raw: warmUpMessage(i++), options: {}, encode: true });
    setImmediate(step);
  };
  setImmediate(step);
}

function serve(port: MessagePort, data: WorkerData | undefined): void {
  const testHooks = data?.testHooks === true;
  const current = new Int32Array(data?.current ?? new SharedArrayBuffer(4));
  let busy = false;
  port.on('message', (batch: WorkerBatch) => {
    busy = true;
    const answers: WorkerResponse[] = [];
    for (const { offset, length, ...req } of batch.messages) {
      Atomics.store(current, 0, req.id);
      const answer = handleRequest({ ...req, raw: new Uint8Array(batch.bytes, offset, length) }, testHooks);
      if (answer.ok && req.encode === true) answer.result = packEncoded(answer.result as EncodedPreview);
      answers.push(answer);
    }
    Atomics.store(current, 0, 0);
    if (crashAfterBatch) process.exit(70);
    port.postMessage(answers);
  });
  port.postMessage(WORKER_READY);
  if (data?.warmUp !== undefined && data.warmUp > 0) void warmUp(data.warmUp, () => busy);
}

if (!isMainThread && parentPort) serve(parentPort, workerData as WorkerData | undefined);
