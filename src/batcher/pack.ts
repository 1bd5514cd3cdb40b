/**
 * Packing documents into requests, as a pure function of their serialized sizes.
 * A request is `<envelope with "documents":[]>` plus the documents joined by commas, so its
 * exact byte size is envelopeBytes + sum(sizes) + (n - 1): no request is serialized twice to
 * find out whether it fits.
 */
import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_SYNC_DOCUMENTS, MAX_PREDICT_DOCUMENTS, MAX_SYNC_DOCUMENTS, parseLimit } from '../limits.js';

export interface PackLimits {
  maxDocuments: number;
  maxRequestBytes: number;
  /** Bytes of the request with an empty `documents` array. */
  envelopeBytes: number;
}

export interface Packing {
  /** Indexes into the input, in input order; every batch within the limits. */
  batches: number[][];
  /** Indexes of documents that alone exceed maxRequestBytes (MAILGATE_ERR_BATCH_DOCUMENT_TOO_LARGE). */
  tooLarge: number[];
}

/** Exact bytes of a request holding documents of these sizes. */
export function requestBytes(envelopeBytes: number, sizes: readonly number[]): number {
  let sum = envelopeBytes;
  for (const s of sizes) sum += s;
  return sum + Math.max(0, sizes.length - 1);
}

/** Greedy, order-preserving: a batch closes when the next document would break a limit. */
export function pack(sizes: readonly number[], limits: PackLimits): Packing {
  const { maxDocuments, maxRequestBytes, envelopeBytes } = limits;
  const batches: number[][] = [];
  const tooLarge: number[] = [];
  let current: number[] = [];
  let bytes = envelopeBytes;
  sizes.forEach((size, index) => {
    if (envelopeBytes + size > maxRequestBytes) {
      tooLarge.push(index);
      return;
    }
    const added = size + (current.length > 0 ? 1 : 0);
    if (current.length >= maxDocuments || bytes + added > maxRequestBytes) {
      batches.push(current);
      current = [];
      bytes = envelopeBytes;
    }
    bytes += size + (current.length > 0 ? 1 : 0);
    current.push(index);
  });
  if (current.length > 0) batches.push(current);
  return { batches, tooLarge };
}

/** Count and byte limits of a target, with defaults, validated (0 and negatives are errors, never "default"). */
export function resolveBatchLimits(
  kind: 'sync' | 'predict',
  options: { maxDocuments?: number; maxRequestBytes?: number },
): { maxDocuments: number; maxRequestBytes: number } {
  const bound = kind === 'sync' ? MAX_SYNC_DOCUMENTS : MAX_PREDICT_DOCUMENTS;
  const maxDocuments = options.maxDocuments ?? (kind === 'sync' ? DEFAULT_SYNC_DOCUMENTS : MAX_PREDICT_DOCUMENTS);
  const maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  return {
    maxDocuments: parseLimit(`${kind} maxDocuments`, maxDocuments, maxDocuments, { max: bound }),
    maxRequestBytes: parseLimit('maxRequestBytes', maxRequestBytes, maxRequestBytes, { min: 1024 }),
  };
}
