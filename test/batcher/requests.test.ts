import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Prepared } from '../../src/batcher/prepare.js';
import { encodeRequest } from '../../src/batcher/requests.js';
import type { Target } from '../../src/batcher/types.js';

/** A prepared document as encodeRequest reads it: its JSON text and the override names it needs. */
function prepared(doc: unknown, overrides: string[] = []): Prepared {
  return { json: JSON.stringify(doc), overrides } as Partial<Prepared> as Prepared;
}

describe('encodeRequest', () => {
  const docs = fc.array(fc.record({ s: fc.string({ unit: 'binary' }), n: fc.integer(), a: fc.array(fc.string()) }), { maxLength: 12 });
  const tag = fc.string({ unit: 'binary', minLength: 1 });

  it('is JSON.stringify of the sync request, whatever the documents and the envelope', () => {
    fc.assert(
      fc.property(docs, tag, fc.array(fc.string({ minLength: 1 }), { maxLength: 3 }), (ds, transformTag, names) => {
        const target: Target = { kind: 'sync', source: 'p/s', transformTag, overrideUserProperties: names };
        const req = encodeRequest(
          target,
          ds.map((d) => prepared(d)),
        );
        const overrides = [...new Set(names)];
        expect(req.json).toBe(
          JSON.stringify({
            documents: ds,
            transform_tag: transformTag,
            include_comments: false,
            ...(overrides.length > 0 ? { override_user_properties: overrides } : {}),
          }),
        );
        expect(req.documents).toBe(ds.length);
      }),
      { numRuns: 300 },
    );
  });

  it('is JSON.stringify of the predict request, and of the envelope alone when asked', () => {
    fc.assert(
      fc.property(docs, tag, fc.boolean(), (ds, transformTag, envelopeOnly) => {
        const target: Target = { kind: 'predict', dataset: 'p/d', version: 'live', transformTag, threshold: 0.5 };
        const req = encodeRequest(
          target,
          ds.map((d) => prepared(d)),
          envelopeOnly,
        );
        const sent = envelopeOnly ? [] : ds;
        expect(req.json).toBe(JSON.stringify({ documents: sent, transform_tag: transformTag, threshold: 0.5 }));
        expect(req.documents).toBe(sent.length);
      }),
      { numRuns: 300 },
    );
  });
});
