/**
 * deliverBatch with an in-process fake client, for properties over many random batches and
 * for paths the emulator cannot reach cheaply (ledger failures, aborts, split budget).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/client.js';
import { isEncodedRequest } from '../../src/api/encoded.js';
import { ApiError } from '../../src/api/errors.js';
import { deliverBatch } from '../../src/batcher/deliver-batch.js';
import { MemoryLedger } from '../../src/ledger/index.js';
import type { SyncTarget } from '../../src/batcher/types.js';
import type { SyncRawEmailsRequest } from '../../src/model/index.js';
import { items, makeDoc, TAG } from './helpers.js';

const BAD = 'bad body';

/** Refuses (400) any request holding a document whose body is BAD; records what it stored. */
function fakeClient(options: { failWith?: () => ApiError } = {}) {
  const stored = new Map<string, number>();
  const requests: SyncRawEmailsRequest[] = [];
  const client: ApiClient = {
    async syncRawEmails(_source, sent, opts) {
      if (opts?.signal?.aborted === true) throw new ApiError('MAILGATE_ERR_API_ABORTED', 'aborted');
      const req = isEncodedRequest(sent) ? (JSON.parse(sent.json) as SyncRawEmailsRequest) : sent;
      requests.push(req);
      if (options.failWith !== undefined) throw options.failWith();
      if (req.documents.some((d) => 'plain' in d.raw_email.body && d.raw_email.body.plain === BAD)) {
        throw new ApiError('MAILGATE_ERR_API_BAD_REQUEST', 'API answered 400', { status: 400, apiMessage: 'documents[0]: bad body' });
      }
      let created = 0;
      for (const d of req.documents) {
        if (!stored.has(d.comment_id!)) created++;
        stored.set(d.comment_id!, (stored.get(d.comment_id!) ?? 0) + 1);
      }
      return {
        status: 'ok',
        new: created,
        updated: 0,
        updated_properties_only: 0,
        updated_text_changed: 0,
        unchanged: req.documents.length - created,
      };
    },
    predictRawEmails: () => Promise.reject(new Error('not used')),
    getSource: () => Promise.resolve({}),
    createSource: () => Promise.resolve({}),
    ensureSource: () => Promise.resolve({}),
    ensureDataset: async () => undefined,
  };
  return { client, stored, requests };
}

const target = (over: Partial<SyncTarget> = {}): SyncTarget => ({ kind: 'sync', source: 'p/s', transformTag: TAG, ...over });

describe('deliverBatch (property-based, fake client)', () => {
  it('every item gets exactly one outcome; good ones delivered once, bad ones rejected, big ones refused', async () => {
    const arb = fc.record({
      kinds: fc.array(fc.constantFrom('good', 'good', 'good', 'good', 'bad', 'big'), { minLength: 0, maxLength: 120 }),
      maxDocuments: fc.integer({ min: 1, max: 40 }),
      concurrency: fc.integer({ min: 1, max: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ kinds, maxDocuments, concurrency }) => {
        const docs = kinds.map((k, i) => makeDoc(i, { body: k === 'bad' ? BAD : k === 'big' ? 'z'.repeat(6000) : undefined }));
        const fake = fakeClient();
        const report = await deliverBatch(items(docs), target({ maxDocuments, maxRequestBytes: 5000 }), fake.client, undefined, {
          concurrency,
        });
        expect(report.outcomes.map((o) => o.key)).toEqual(docs.map((_, i) => `k${i}`));
        report.outcomes.forEach((o, i) => {
          const expected = { good: 'delivered', bad: 'rejected', big: 'rejected' }[kinds[i]!];
          expect(o.status).toBe(expected);
          if (kinds[i] === 'big') expect(o).toMatchObject({ code: 'MAILGATE_ERR_BATCH_DOCUMENT_TOO_LARGE' });
          if (kinds[i] === 'bad')
            expect(o).toMatchObject({ code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'documents[0]: bad body', httpStatus: 400 });
        });
        const good = kinds.filter((k) => k === 'good').length;
        expect(fake.stored.size).toBe(good);
        expect([...fake.stored.values()].every((n) => n === 1)).toBe(true);
        expect(report.counts.new).toBe(good);
        expect(report.requests).toBe(fake.requests.length);
        for (const r of fake.requests) expect(r.documents.length).toBeLessThanOrEqual(maxDocuments);
      }),
      { numRuns: 150 },
    );
  });
});

describe('deliverBatch edge paths', () => {
  it('an aborted signal sends nothing and leaves every item for retry', async () => {
    const fake = fakeClient();
    const controller = new AbortController();
    controller.abort();
    const report = await deliverBatch(items([makeDoc(1), makeDoc(2)]), target(), fake.client, undefined, { signal: controller.signal });
    expect(report.outcomes.map((o) => [o.status, 'code' in o ? o.code : undefined])).toEqual([
      ['retry', 'MAILGATE_ERR_API_ABORTED'],
      ['retry', 'MAILGATE_ERR_API_ABORTED'],
    ]);
    expect(fake.requests).toHaveLength(0);
  });

  it("retry outcomes carry the server's Retry-After", async () => {
    const fake = fakeClient({
      failWith: () =>
        new ApiError('MAILGATE_ERR_API_RATE_LIMITED', 'slow down (gave up after 4 attempts)', {
          status: 429,
          retryAfterMs: 30_000,
          exhausted: 'attempts',
        }),
    });
    const report = await deliverBatch(items([makeDoc(1)]), target(), fake.client);
    expect(report.outcomes[0]).toMatchObject({ status: 'retry', code: 'MAILGATE_ERR_API_RATE_LIMITED', retryAfterMs: 30_000 });
  });

  it('a split budget of 0 leaves the batch unisolated for retry (never shown to be bad), with the API message', async () => {
    const fake = fakeClient();
    const docs = [makeDoc(1), makeDoc(2, { body: BAD }), makeDoc(3)];
    const report = await deliverBatch(items(docs), target(), fake.client, undefined, { maxSplitRequests: 0 });
    expect(report.outcomes.every((o) => o.status === 'retry' && o.code === 'MAILGATE_ERR_BATCH_NOT_ISOLATED')).toBe(true);
    expect(report.outcomes[0]).toMatchObject({ message: expect.stringContaining('bad body') as string });
    expect(report.requests).toBe(1);
  });

  it('a ledger that fails to record does not undo the delivery', async () => {
    const ledger = new MemoryLedger();
    ledger.record = () => Promise.reject(new Error('disk full'));
    const report = await deliverBatch(items([makeDoc(1)]), target(), fakeClient().client, ledger);
    expect(report.outcomes[0]!.status).toBe('delivered');
    expect(report.ledgerError).toMatchObject({ code: 'MAILGATE_ERR_STORE_UNAVAILABLE' });
  });

  it('a rejection never overwrites what the ledger knows was delivered', async () => {
    const ledger = new MemoryLedger();
    const fake = fakeClient();
    const first = makeDoc(1);
    await deliverBatch(items([first]), target(), fake.client, ledger);
    const before = await ledger.lookup('p/s', [first.comment_id!]);
    await deliverBatch(items([{ ...first, raw_email: { ...first.raw_email, body: { plain: BAD } } }]), target(), fake.client, ledger);
    expect(await ledger.lookup('p/s', [first.comment_id!])).toEqual(before);
    const fresh = makeDoc(2, { body: BAD });
    await deliverBatch(items([fresh]), target(), fake.client, ledger);
    expect((await ledger.lookup('p/s', [fresh.comment_id!])).get(fresh.comment_id!)?.outcome).toBe('rejected');
  });

  it('invalid targets and options are configuration errors', async () => {
    const { client } = fakeClient();
    for (const t of [target({ transformTag: '' }), target({ maxDocuments: 0 }), target({ overrideUserProperties: ['string:Sender'] })]) {
      await expect(deliverBatch([], t, client)).rejects.toMatchObject({
        code: expect.stringMatching(/CONFIG_INVALID|PROPERTY_CONFLICT/) as string,
      });
    }
    await expect(deliverBatch([], target(), client, undefined, { concurrency: 0 })).rejects.toMatchObject({
      code: 'MAILGATE_ERR_CONFIG_INVALID',
    });
    await expect(
      deliverBatch([], { kind: 'predict', dataset: 'p/d', version: 1, transformTag: TAG, threshold: 2 }, client),
    ).rejects.toMatchObject({ code: 'MAILGATE_ERR_CONFIG_INVALID' });
  });
});
