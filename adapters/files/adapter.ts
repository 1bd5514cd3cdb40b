/**
 * The files adapter: reads its inputs and pushes batches of `Inbound` to the sink with a
 * checkpoint per input and destination (`files:<scope>:<absolute input path>` →
 * `{ path, index, offset }`, the next item to read), so an interrupted import continues where
 * it stopped, and the same input read for another destination starts afresh.
 */
import { resolve } from 'node:path';
import { parseLimit } from '../../src/limits.js';
import type { Accepted, Adapter, Checkpoint, Inbound, Intake } from '../../src/pipeline/types.js';
import { fileKey } from './identity.js';
import { readInput } from './read.js';
import type { FileFailure, FileItem, MboxQuoting, ResumePoint } from './types.js';

export interface FilesAdapterConfig {
  /** Instance name from the configuration (default `files`). */
  name?: string;
  /** Files and directories to read, in this order. */
  paths: string[];
  /** Route the messages belong to. */
  route: string;
  /**
   * What the checkpoints are scoped to (default: the route name). The import command passes
   * the route and its target, so that reading the same input into another source reads it all.
   */
  scope?: string;
  /** Messages per `accept` call (default 100); an input's first calls hold fewer (FIRST_BATCH_MESSAGES, growing). */
  batchSize?: number;
  /** Raw bytes per `accept` call: a batch is handed over once it holds this many (default 16 MiB). */
  batchBytes?: number;
  maxMessageBytes?: number;
  mboxQuoting?: MboxQuoting;
  /**
   * Items that could not be read (oversized, unreadable, corrupt .msg) are handed to the sink
   * as failures (dead letters, with the file's bytes when they were read), and reported here.
   */
  onError?: (item: FileFailure) => void;
  /** Files skipped in a directory walk (not mail; a link to a file outside the input folder), with the reason. */
  onSkip?: (path: string, reason: string) => void;
  /** Read links to files outside an input folder too (default false: skipped and reported through onSkip). */
  followSymlinks?: boolean;
  /** Clock for `receivedAt` when the file gives no arrival time (tests). */
  now?: () => Date;
}

export const FILES_BATCH_SIZE = 100;
export const FILES_BATCH_BYTES = 16 * 1024 * 1024;
/**
 * Messages in an input's first batch at most: each batch is parsed whole before it is stored and
 * its messages can be delivered, so a smaller first one sets storing and delivery going sooner
 * (with 500-message batches, the first commit waited for 500 parses while the store and the API
 * had nothing to do). Each later batch may be BATCH_GROWTH times the one before, up to batchSize.
 */
export const FIRST_BATCH_MESSAGES = 50;
const BATCH_GROWTH = 4;

/**
 * Batches handed to the sink and not yet durable, at most: reading and parsing run ahead of
 * storing by this many. With the byte bound per batch, this bounds the raw bytes in memory.
 */
const IN_FLIGHT = 3;

export function checkpointKey(scope: string, input: string): string {
  return `files:${scope}:${resolve(input)}`;
}

function toResume(value: Record<string, unknown> | undefined): ResumePoint | undefined {
  if (!value || typeof value.path !== 'string' || typeof value.index !== 'number') return undefined;
  return { path: value.path, index: value.index, offset: typeof value.offset === 'number' ? value.offset : undefined };
}

async function readOne(input: string, config: FilesAdapterConfig, sink: Intake, signal: AbortSignal): Promise<void> {
  const key = checkpointKey(config.scope ?? config.route, input);
  const batchSize = parseLimit('batchSize', config.batchSize, FILES_BATCH_SIZE);
  const batchBytes = parseLimit('batchBytes', config.batchBytes, FILES_BATCH_BYTES);
  let bytes = 0;
  let size = Math.min(batchSize, FIRST_BATCH_MESSAGES);
  const now = config.now ?? (() => new Date());
  let batch: Inbound[] = [];
  let last: FileItem | undefined;
  let dirty = false;
  // Up to IN_FLIGHT batches accepted but not yet durable while the next is read (the sink
  // stores batches in call order, each with its checkpoint, so nothing is acknowledged before
  // it is durable).
  const inFlight: Array<Promise<Accepted[]>> = [];
  const flush = async () => {
    if (!dirty) return;
    // The checkpoint is the position after the batch's last item, built once a batch rather than once an item.
    const checkpoint: Checkpoint | undefined =
      last === undefined ? undefined : { key, value: { path: last.origin.details.path, index: last.next.index, offset: last.next.offset } };
    const accepted = sink.accept(batch, checkpoint === undefined ? {} : { checkpoint });
    accepted.catch(() => undefined);
    inFlight.push(accepted);
    batch = [];
    bytes = 0;
    dirty = false;
    size = Math.min(batchSize, size * BATCH_GROWTH);
    while (inFlight.length >= IN_FLIGHT) await inFlight.shift();
  };
  const items = readInput(resolve(input), {
    maxMessageBytes: config.maxMessageBytes,
    mboxQuoting: config.mboxQuoting,
    resumeFrom: toResume(await sink.checkpoint(key)),
    onSkip: config.onSkip,
    followSymlinks: config.followSymlinks,
  });
  for await (const item of items) {
    if (signal.aborted) break;
    if (item.error) {
      config.onError?.(item);
      const failure = { code: item.error.code, message: item.error.message };
      const raw = item.bytes ?? Buffer.alloc(0);
      batch.push({ raw, key: fileKey(item.origin), origin: item.origin, route: config.route, receivedAt: now(), failure });
      bytes += item.bytes?.length ?? 0;
    } else {
      batch.push({
        raw: item.raw,
        key: fileKey(item.origin),
        origin: item.origin,
        route: config.route,
        receivedAt: item.receivedAt ?? now(),
      });
      bytes += item.raw.length;
    }
    last = item;
    dirty = true;
    if (batch.length >= size || bytes >= batchBytes) await flush();
  }
  if (!signal.aborted) await flush();
  for (const accepted of inFlight) await accepted;
}

export function createFilesAdapter(config: FilesAdapterConfig): Adapter {
  return {
    kind: 'files',
    name: config.name ?? 'files',
    mode: 'pull',
    async start(sink: Intake, signal: AbortSignal): Promise<void> {
      for (const input of config.paths) {
        if (signal.aborted) return;
        await readOne(input, config, sink, signal);
      }
    },
  };
}
