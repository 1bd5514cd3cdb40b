/**
 * The files adapter: reads its inputs and pushes batches of `Inbound` to the sink with a
 * checkpoint per input (`files:<absolute input path>` → `{ path, index, offset }`, the next
 * item to read), so an interrupted import continues where it stopped.
 */
import { resolve } from 'node:path';
import type { Adapter, Checkpoint, Inbound, IntakeSink } from '../../src/pipeline/types.js';
import { readInput } from './read.js';
import type { FileFailure, MboxQuoting, ResumePoint } from './types.js';

export interface FilesAdapterConfig {
  /** Files and directories to read, in this order. */
  paths: string[];
  /** Route the messages belong to. */
  route: string;
  /** Messages per `accept` call (default 100). */
  batchSize?: number;
  maxMessageBytes?: number;
  mboxQuoting?: MboxQuoting;
  /** Items that could not be read (oversized, unreadable, corrupt .msg): the checkpoint moves past them. */
  onError?: (item: FileFailure) => void;
  /** Files skipped in a directory walk because they are not mail. */
  onSkip?: (path: string, reason: string) => void;
  /** Clock for `receivedAt` (tests). */
  now?: () => Date;
}

export const DEFAULT_FILES_BATCH_SIZE = 100;

export function checkpointKey(input: string): string {
  return `files:${resolve(input)}`;
}

function toResume(value: Record<string, unknown> | undefined): ResumePoint | undefined {
  if (!value || typeof value.path !== 'string' || typeof value.index !== 'number') return undefined;
  return { path: value.path, index: value.index, offset: typeof value.offset === 'number' ? value.offset : undefined };
}

async function readOne(input: string, config: FilesAdapterConfig, sink: IntakeSink, signal: AbortSignal): Promise<void> {
  const key = checkpointKey(input);
  const batchSize = config.batchSize ?? DEFAULT_FILES_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  const now = config.now ?? (() => new Date());
  let batch: Inbound[] = [];
  let checkpoint: Checkpoint | undefined;
  let dirty = false;
  // One batch in flight while the next is read (the sink stores batches in call order, each
  // with its checkpoint, so nothing is acknowledged before it is durable).
  let inFlight: Promise<void> | undefined;
  const flush = async () => {
    if (!dirty) return;
    const previous = inFlight;
    inFlight = sink.accept(batch, checkpoint);
    inFlight.catch(() => undefined);
    batch = [];
    dirty = false;
    await previous;
  };
  const items = readInput(resolve(input), {
    maxMessageBytes: config.maxMessageBytes,
    mboxQuoting: config.mboxQuoting,
    resumeFrom: toResume(await sink.checkpoint(key)),
    onSkip: config.onSkip,
  });
  for await (const item of items) {
    if (signal.aborted) break;
    if (item.error) config.onError?.(item);
    else batch.push({ raw: item.raw, origin: item.origin, route: config.route, receivedAt: now() });
    checkpoint = { key, value: { path: item.origin.path, index: item.next.index, offset: item.next.offset } };
    dirty = true;
    if (batch.length >= batchSize) await flush();
  }
  if (!signal.aborted) await flush();
  await inFlight;
}

export function createFilesAdapter(config: FilesAdapterConfig): Adapter {
  return {
    kind: 'files',
    async start(sink: IntakeSink, signal: AbortSignal): Promise<void> {
      for (const input of config.paths) {
        if (signal.aborted) return;
        await readOne(input, config, sink, signal);
      }
    },
  };
}
