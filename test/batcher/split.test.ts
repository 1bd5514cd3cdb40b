import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { failureSignature, isSplittable, requestRejected } from '../../src/batcher/deliver-batch.js';
import { newSplitState, sendSplitting, type SendResult } from '../../src/batcher/split.js';

const split = (maxSplitRequests: number) => ({ isSplittable, signature: failureSignature, requestRejected, maxSplitRequests });
const refusal = (status: number, message: string) =>
  new ApiError(status === 400 ? 'MAILGATE_ERR_API_BAD_REQUEST' : 'MAILGATE_ERR_API_UNPROCESSABLE', message, {
    status,
    apiMessage: message,
  });

/** A fake service: refuses (422) any request holding a bad index; counts what it accepted. */
function fakeService(bad: ReadonlySet<number>) {
  const accepted: number[] = [];
  let calls = 0;
  const send = async (sent: number[], envelopeOnly = false): Promise<SendResult<number>> => {
    calls += 1;
    const indices = envelopeOnly ? [] : sent;
    const culprit = indices.find((i) => bad.has(i));
    if (culprit !== undefined)
      return {
        ok: false,
        error: new ApiError('MAILGATE_ERR_API_UNPROCESSABLE', `doc ${culprit} is bad`, {
          status: 422,
          apiMessage: `doc ${culprit} is bad`,
        }),
      };
    accepted.push(...indices);
    return { ok: true, value: indices.length };
  };
  return { send, accepted, calls: () => calls };
}

const batchWithBad = fc
  .integer({ min: 1, max: 600 })
  .chain((n) => fc.record({ n: fc.constant(n), bad: fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { maxLength: Math.min(n, 8) }) }));

describe('sendSplitting (property-based, fake service)', () => {
  it('isolates exactly the bad documents, delivers every other one once, within the cost bound', async () => {
    await fc.assert(
      fc.asyncProperty(batchWithBad, async ({ n, bad }) => {
        const service = fakeService(new Set(bad));
        const indices = Array.from({ length: n }, (_, i) => i);
        const state = newSplitState();
        const parts = await sendSplitting(indices, service.send, split(100_000), state);

        const covered = parts.flatMap((p) => p.indices).sort((a, b) => a - b);
        expect(covered).toEqual(indices);
        const rejected = parts
          .filter((p) => p.kind === 'rejected')
          .flatMap((p) => p.indices)
          .sort((a, b) => a - b);
        expect(rejected).toEqual([...bad].sort((a, b) => a - b));
        for (const p of parts.filter((x) => x.kind === 'rejected')) {
          expect((p as { error: ApiError }).error.apiMessage).toBe(`doc ${p.indices[0]} is bad`);
        }
        expect([...service.accepted].sort((a, b) => a - b)).toEqual(indices.filter((i) => !bad.includes(i)));
        expect(parts.every((p) => p.kind === 'ok' || p.kind === 'rejected')).toBe(true);

        const depth = Math.ceil(Math.log2(Math.max(n, 2)));
        expect(state.requests).toBe(service.calls());
        expect(state.splitRequests).toBe(state.requests - 1);
        expect(state.splitRequests).toBeLessThanOrEqual(bad.length * (2 * depth + 1));
      }),
      { numRuns: 300 },
    );
  });

  it('one bad document in 4096 costs at most 25 extra requests, wherever it sits', async () => {
    for (const position of [0, 1, 1000, 2047, 2048, 4000, 4095]) {
      const service = fakeService(new Set([position]));
      const state = newSplitState();
      await sendSplitting(
        Array.from({ length: 4096 }, (_, i) => i),
        service.send,
        split(256),
        state,
      );
      expect(state.splitRequests).toBeLessThanOrEqual(25);
      expect(service.accepted).toHaveLength(4095);
    }
  });

  it('stops isolating when the split budget runs out and reports the rest as unsplit', async () => {
    const service = fakeService(new Set(Array.from({ length: 64 }, (_, i) => i))); // everything is bad, each for its own reason
    const state = newSplitState();
    const parts = await sendSplitting(
      Array.from({ length: 64 }, (_, i) => i),
      service.send,
      split(5),
      state,
    );
    expect(state.splitRequests).toBe(5);
    expect(parts.flatMap((p) => p.indices).sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    expect(parts.some((p) => p.kind === 'unsplit')).toBe(true);
    expect(parts.every((p) => p.kind === 'unsplit' || p.kind === 'rejected')).toBe(true);
  });

  it('halts on a failure splitting cannot help and sends nothing after it', async () => {
    let calls = 0;
    const send = async (_indices: number[]): Promise<SendResult<number>> => {
      calls += 1;
      if (calls === 1) return { ok: false, error: new ApiError('MAILGATE_ERR_API_BAD_REQUEST', 'bad', { status: 400 }) };
      return {
        ok: false,
        error: new ApiError('MAILGATE_ERR_API_SERVER', 'down (gave up after 4 attempts)', { status: 503, exhausted: 'attempts' }),
      };
    };
    const state = newSplitState();
    const parts = await sendSplitting([0, 1, 2, 3], send, split(10), state);
    expect(calls).toBe(2);
    expect(parts.map((p) => p.kind)).toEqual(['failed', 'failed']);
    expect(parts.map((p) => (p as { sent: boolean }).sent)).toEqual([true, false]);
    const again = await sendSplitting([4, 5], send, split(10), state);
    expect(calls).toBe(2);
    expect(again).toEqual([expect.objectContaining({ kind: 'failed', sent: false, indices: [4, 5] })]);
  });
});

/**
 * A fake service that refuses every request whose envelope is bad with one message, whatever
 * it holds (as a wrong transform tag does), and documents in `bad` with another message each.
 * `emptyRefused`: it also refuses an empty document list, with its own message.
 */
function wholeRequestService(options: {
  envelopeBad: boolean;
  bad?: ReadonlySet<number>;
  badMessage?: (i: number) => string;
  emptyRefused?: boolean;
}) {
  const requests: number[][] = [];
  const send = async (sent: number[], envelopeOnly = false): Promise<SendResult<number>> => {
    const indices = envelopeOnly ? [] : sent;
    requests.push(indices);
    if (indices.length === 0 && options.emptyRefused === true)
      return { ok: false, error: refusal(400, 'documents: at least one document is required') };
    if (options.envelopeBad) return { ok: false, error: refusal(422, "The value 'bad.0.XXXXXXXX' is not a valid transform tag.") };
    const culprit = indices.find((i) => options.bad?.has(i) === true);
    if (culprit !== undefined) return { ok: false, error: refusal(400, options.badMessage?.(culprit) ?? 'documents[0]: body too long') };
    return { ok: true, value: indices.length };
  };
  return { send, requests };
}

describe('request-level rejections', () => {
  const all = (n: number) => Array.from({ length: n }, (_, i) => i);

  it.each([[2], [3], [4096]])(
    'a refusal of the whole request halts after a handful of requests (%i documents), nothing rejected',
    async (n) => {
      const service = wholeRequestService({ envelopeBad: true });
      const state = newSplitState();
      const parts = await sendSplitting(all(n), service.send, split(256), state);
      expect(parts).toEqual([expect.objectContaining({ kind: 'failed', sent: true, indices: all(n) })]);
      expect((parts[0] as { error: ApiError }).error).toMatchObject({ code: 'MAILGATE_ERR_API_REQUEST_REJECTED', status: 422 });
      expect(state.requests).toBe(4); // the batch, its two halves, the envelope alone
      expect(service.requests.at(-1)).toEqual([]);
      expect(state.halted).toBeDefined();
      const next = await sendSplitting([n, n + 1], service.send, split(256), state);
      expect(next).toEqual([expect.objectContaining({ kind: 'failed', sent: false })]);
      expect(state.requests).toBe(4);
    },
  );

  it('a single-document batch refused like its envelope is a request-level refusal too', async () => {
    const service = wholeRequestService({ envelopeBad: true });
    const state = newSplitState();
    const parts = await sendSplitting([7], service.send, split(256), state);
    expect(parts).toEqual([expect.objectContaining({ kind: 'failed', indices: [7] })]);
    expect(service.requests).toEqual([[7], []]);
  });

  it('a service that refuses empty lists: one document from each half, sent alone, decides', async () => {
    const service = wholeRequestService({ envelopeBad: true, emptyRefused: true });
    const state = newSplitState();
    const parts = await sendSplitting(all(4096), service.send, split(256), state);
    expect(parts.map((p) => p.kind)).toEqual(['failed']);
    expect(service.requests.map((r) => r.length)).toEqual([4096, 2048, 2048, 0, 1, 1]);
  });

  it('two bad documents with the same message, one in each half, are isolated, not taken for a request-level refusal', async () => {
    for (const emptyRefused of [false, true]) {
      const bad = new Set([0, 2048]); // first of each half: the halves fail exactly like the batch
      const service = wholeRequestService({ envelopeBad: false, bad, emptyRefused });
      const state = newSplitState();
      const parts = await sendSplitting(all(4096), service.send, split(256), state);
      expect(parts.filter((p) => p.kind === 'rejected').flatMap((p) => p.indices)).toEqual([0, 2048]);
      expect(parts.filter((p) => p.kind === 'ok').flatMap((p) => p.indices)).toHaveLength(4094);
      expect(state.halted).toBeUndefined();
      expect(state.splitRequests).toBeLessThanOrEqual(2 * 25 + 3);
    }
  });

  // With a service that refuses empty lists and documents that all fail alike, the rule rests on
  // the documents probed alone (docs/delivery.md): that case is covered by the examples above.
  it('property: with a sound envelope nothing halts; every document is delivered or rejected exactly once', async () => {
    const arb = fc.record({
      n: fc.integer({ min: 1, max: 300 }),
      bad: fc.uniqueArray(fc.integer({ min: 0, max: 299 }), { maxLength: 40 }),
      sameMessage: fc.boolean(),
      emptyRefused: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ n, bad, sameMessage, emptyRefused }) => {
        const badSet = new Set(bad.filter((i) => i < n));
        const service = wholeRequestService({
          envelopeBad: false,
          bad: badSet,
          emptyRefused: emptyRefused && !sameMessage,
          badMessage: sameMessage ? undefined : (i) => `doc ${i}`,
        });
        const state = newSplitState();
        const parts = await sendSplitting(all(n), service.send, split(100_000), state);
        expect(parts.flatMap((p) => p.indices).sort((a, b) => a - b)).toEqual(all(n));
        expect(parts.every((p) => p.kind === 'ok' || p.kind === 'rejected')).toBe(true);
        expect(
          parts
            .filter((p) => p.kind === 'rejected')
            .flatMap((p) => p.indices)
            .sort((a, b) => a - b),
        ).toEqual([...badSet].sort((a, b) => a - b));
      }),
      { numRuns: 300 },
    );
  });

  it('property: with a bad envelope every batch halts within 6 requests and no document is rejected', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 5000 }), fc.boolean(), async (n, emptyRefused) => {
        const service = wholeRequestService({ envelopeBad: true, emptyRefused });
        const state = newSplitState();
        const parts = await sendSplitting(all(n), service.send, split(256), state);
        expect(parts.flatMap((p) => p.indices).sort((a, b) => a - b)).toEqual(all(n));
        // A lone document is all a one-document batch can show: with empty lists refused, it is rejected alone.
        if (n === 1 && emptyRefused) return void expect(parts.map((p) => p.kind)).toEqual(['rejected']);
        expect(parts.every((p) => p.kind === 'failed')).toBe(true);
        expect(state.requests).toBeLessThanOrEqual(6);
      }),
      { numRuns: 200 },
    );
  });
});
