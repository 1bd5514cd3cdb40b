/**
 * What travels between the store and its writer thread (./writer.ts): an enqueue call's inputs
 * as plain values, their raw bytes back to back in one buffer moved to the thread (a Buffer
 * handed over as it is would copy the whole buffer it is a slice of), and the answer.
 */
import type { Checkpoint } from '../../model/origin.js';
import { messageFacts } from '../../preview/facts.js';
import type { Fence, ItemError, OutboxInput } from '../types.js';
import type { WriterConcern } from './concerns.js';
import type { SqliteOptions } from './db.js';

export interface WriterData {
  path: string;
  /** The store was opened with a clock of its own (`SqliteOptions.now`): each request carries its reading. */
  clock: boolean;
  options: Pick<SqliteOptions, 'synchronous' | 'busyTimeoutMs' | 'maxPageCount'>;
}

/** One input without its document object and raw bytes: those are `json` and a place in `bytes`. */
export type WireInput = Omit<OutboxInput, 'document' | 'preview' | 'raw'> & {
  json: { document: string; preview?: string };
  raw?: [number, number];
};

export interface EnqueueRequest {
  id: number;
  /** The store's clock when the call was made (only with `WriterData.clock`). */
  now?: number;
  op: 'enqueue';
  inputs: WireInput[];
  bytes: ArrayBuffer;
  checkpoint?: Checkpoint;
  fence?: Fence;
}

/** The other writes (concerns.ts WRITER_METHODS), their arguments as given; a claim answers its rows (`claimRows`). */
export type WriterRequest =
  | EnqueueRequest
  | { id: number; now?: number; op: 'call'; concern: WriterConcern; method: string; args: unknown[] };

export type WriterReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; name: string; message: string; code?: string };

/** The plain form of an input (the document as JSON text, computed here when the caller had none). */
function wireInput(item: OutboxInput, raw: [number, number] | undefined): WireInput {
  const json = item.json ?? { document: JSON.stringify(item.document), ...(item.preview ? { preview: JSON.stringify(item.preview) } : {}) };
  const out: WireInput = { route: item.route, key: item.key, commentId: item.commentId, origin: item.origin, json };
  if (raw !== undefined) out.raw = raw;
  if (item.hashes !== undefined) out.hashes = item.hashes;
  // Taken from the document here when the caller had none, as the store would before its transaction.
  out.facts = item.facts ?? messageFacts(item.document);
  if (item.warnings !== undefined) out.warnings = item.warnings;
  // As the store would write it (a GatewayError's toJSON).
  if (item.error !== undefined) out.error = JSON.parse(JSON.stringify(item.error)) as ItemError;
  if (item.afterDelivery === true) out.afterDelivery = true;
  if (item.thread !== undefined) out.thread = item.thread;
  if (item.aliases !== undefined) out.aliases = item.aliases;
  return out;
}

export function toWire(id: number, items: OutboxInput[], checkpoint?: Checkpoint, fence?: Fence): EnqueueRequest {
  let size = 0;
  for (const item of items) size += item.raw?.byteLength ?? 0;
  const packed = new Uint8Array(new ArrayBuffer(size));
  let offset = 0;
  const inputs = items.map((item) => {
    if (item.raw === undefined) return wireInput(item, undefined);
    packed.set(item.raw, offset);
    const at: [number, number] = [offset, item.raw.byteLength];
    offset += item.raw.byteLength;
    return wireInput(item, at);
  });
  return { id, op: 'enqueue', inputs, bytes: packed.buffer, ...(checkpoint ? { checkpoint } : {}), ...(fence ? { fence } : {}) };
}

/** The inputs again, as the store's enqueue takes them (the document is never read: `json` is written). */
export function fromWire(req: EnqueueRequest): OutboxInput[] {
  return req.inputs.map((w) => {
    const { raw, ...rest } = w;
    const input = rest as OutboxInput;
    if (raw !== undefined) input.raw = Buffer.from(req.bytes, raw[0], raw[1]);
    return input;
  });
}
