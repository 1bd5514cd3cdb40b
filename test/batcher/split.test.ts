import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { isSplittable } from '../../src/batcher/deliver.js';
import { newSplitState, sendSplitting, type SendResult } from '../../src/batcher/split.js';

/** A fake service: refuses (422) any request holding a bad index; counts what it accepted. */
function fakeService(bad: ReadonlySet<number>) {
  const accepted: number[] = [];
  let calls = 0;
  const send = async (indices: number[]): Promise<SendResult<number>> => {
    calls += 1;
    const culprit = indices.find((i) => bad.has(i));
    if (culprit !== undefined) return { ok: false, error: new ApiError('MAILGATE_ERR_API_UNPROCESSABLE', `doc ${culprit} is bad`, { status: 422, apiMessage: `doc ${culprit} is bad` }) };
    accepted.push(...indices);
    return { ok: true, value: indices.length };
  };
  return { send, accepted, calls: () => calls };
}

const batchWithBad = fc.integer({ min: 1, max: 600 }).chain((n) =>
  fc.record({ n: fc.constant(n), bad: fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { maxLength: Math.min(n, 8) }) }));

describe('sendSplitting (property-based, fake service)', () => {
  it('isolates exactly the bad documents, delivers every other one once, within the cost bound', async () => {
    await fc.assert(
      fc.asyncProperty(batchWithBad, async ({ n, bad }) => {
        const service = fakeService(new Set(bad));
        const indices = Array.from({ length: n }, (_, i) => i);
        const state = newSplitState();
        const parts = await sendSplitting(indices, service.send, { isSplittable, maxSplitRequests: 100_000 }, state);

        const covered = parts.flatMap((p) => p.indices).sort((a, b) => a - b);
        expect(covered).toEqual(indices);
        const rejected = parts.filter((p) => p.kind === 'rejected').flatMap((p) => p.indices).sort((a, b) => a - b);
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
      await sendSplitting(Array.from({ length: 4096 }, (_, i) => i), service.send, { isSplittable, maxSplitRequests: 256 }, state);
      expect(state.splitRequests).toBeLessThanOrEqual(25);
      expect(service.accepted).toHaveLength(4095);
    }
  });

  it('stops isolating when the split budget runs out and reports the rest as unsplit', async () => {
    const service = fakeService(new Set(Array.from({ length: 64 }, (_, i) => i))); // everything is bad
    const state = newSplitState();
    const parts = await sendSplitting(Array.from({ length: 64 }, (_, i) => i), service.send, { isSplittable, maxSplitRequests: 5 }, state);
    expect(state.splitRequests).toBe(5);
    expect(parts.flatMap((p) => p.indices).sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    expect(parts.some((p) => p.kind === 'unsplit')).toBe(true);
    expect(parts.every((p) => p.kind === 'unsplit' || p.kind === 'rejected')).toBe(true);
  });

  it('halts on a failure splitting cannot help and sends nothing after it', async () => {
    let calls = 0;
    const send = async (indices: number[]): Promise<SendResult<number>> => {
      calls += 1;
      if (calls === 1) return { ok: false, error: new ApiError('MAILGATE_ERR_API_BAD_REQUEST', 'bad', { status: 400 }) };
      return { ok: false, error: new ApiError('MAILGATE_ERR_API_RETRIES_EXHAUSTED', 'down', { status: 503 }) };
    };
    const state = newSplitState();
    const parts = await sendSplitting([0, 1, 2, 3], send, { isSplittable, maxSplitRequests: 10 }, state);
    expect(calls).toBe(2);
    expect(parts.map((p) => p.kind)).toEqual(['failed', 'failed']);
    expect(parts.map((p) => (p as { sent: boolean }).sent)).toEqual([true, false]);
    const again = await sendSplitting([4, 5], send, { isSplittable, maxSplitRequests: 10 }, state);
    expect(calls).toBe(2);
    expect(again).toEqual([expect.objectContaining({ kind: 'failed', sent: false, indices: [4, 5] })]);
  });
});
