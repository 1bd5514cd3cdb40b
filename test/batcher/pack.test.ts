import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pack, requestBytes, resolveBatchLimits } from '../../src/batcher/pack.js';
import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_SYNC_DOCUMENTS, MAX_PREDICT_DOCUMENTS, MAX_SYNC_DOCUMENTS } from '../../src/limits.js';

describe('pack (property-based)', () => {
  const arbitraries = fc.record({
    sizes: fc.array(fc.integer({ min: 2, max: 5000 }), { maxLength: 300 }),
    maxDocuments: fc.integer({ min: 1, max: 50 }),
    maxRequestBytes: fc.integer({ min: 1024, max: 20_000 }),
    envelopeBytes: fc.integer({ min: 10, max: 500 }),
  });

  it('never exceeds a limit, and every input has exactly one outcome', () => {
    fc.assert(
      fc.property(arbitraries, ({ sizes, ...limits }) => {
        const { batches, tooLarge } = pack(sizes, limits);
        const seen = [...batches.flat(), ...tooLarge].sort((a, b) => a - b);
        expect(seen).toEqual(sizes.map((_, i) => i));
        for (const batch of batches) {
          expect(batch.length).toBeGreaterThan(0);
          expect(batch.length).toBeLessThanOrEqual(limits.maxDocuments);
          expect(
            requestBytes(
              limits.envelopeBytes,
              batch.map((i) => sizes[i]!),
            ),
          ).toBeLessThanOrEqual(limits.maxRequestBytes);
        }
        for (const i of tooLarge) expect(limits.envelopeBytes + sizes[i]!).toBeGreaterThan(limits.maxRequestBytes);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps input order and closes a batch only when the next document would not fit', () => {
    fc.assert(
      fc.property(arbitraries, ({ sizes, ...limits }) => {
        const { batches } = pack(sizes, limits);
        const flat = batches.flat();
        expect(flat).toEqual([...flat].sort((a, b) => a - b));
        for (let b = 0; b + 1 < batches.length; b++) {
          const batch = batches[b]!;
          const next = batches[b + 1]![0]!;
          const grown = requestBytes(
            limits.envelopeBytes,
            [...batch, next].map((i) => sizes[i]!),
          );
          expect(batch.length >= limits.maxDocuments || grown > limits.maxRequestBytes).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('requestBytes is exactly the JSON length of the request', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ s: fc.string(), n: fc.integer() }), { maxLength: 20 }), fc.string(), (docs, tag) => {
        const envelope = Buffer.byteLength(JSON.stringify({ documents: [], transform_tag: tag }));
        const sizes = docs.map((d) => Buffer.byteLength(JSON.stringify(d)));
        expect(requestBytes(envelope, sizes)).toBe(Buffer.byteLength(JSON.stringify({ documents: docs, transform_tag: tag })));
      }),
    );
  });
});

describe('resolveBatchLimits', () => {
  it('defaults: sync 4096, predict 4096, bytes DEFAULT_MAX_REQUEST_BYTES', () => {
    expect(resolveBatchLimits('sync', {})).toEqual({ maxDocuments: DEFAULT_SYNC_DOCUMENTS, maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES });
    expect(resolveBatchLimits('predict', {})).toEqual({ maxDocuments: MAX_PREDICT_DOCUMENTS, maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES });
  });
  it('allows sync up to 16384', () => {
    expect(resolveBatchLimits('sync', { maxDocuments: MAX_SYNC_DOCUMENTS }).maxDocuments).toBe(16_384);
  });
  it.each([
    ['sync', { maxDocuments: 0 }],
    ['sync', { maxDocuments: 16_385 }],
    ['predict', { maxDocuments: 4097 }],
    ['sync', { maxDocuments: 2.5 }],
    ['sync', { maxRequestBytes: 0 }],
    ['predict', { maxRequestBytes: -1 }],
  ] as const)('refuses %s %j', (kind, options) => {
    expect(() => resolveBatchLimits(kind, options)).toThrowError(expect.objectContaining({ code: 'MAILGATE_ERR_CONFIG_INVALID' }) as Error);
  });
});
