/**
 * deliverBatch against the emulator over real HTTP: faults, property
 * conflicts, poison documents, the ledger and dry runs. The emulator's stats are the
 * witness: nothing billed twice, nothing stored twice, nothing lost.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import { deliverBatch } from '../../src/batcher/deliver-batch.js';
import { MemoryLedger } from '../../src/ledger/index.js';
import type { DeliveryItem, ItemOutcome, PredictTarget, SyncTarget, Target } from '../../src/batcher/types.js';
import type { FaultRule } from '../../src/emulator/types.js';
import { startEmulator } from '../support/emulator.js';
import { admin, api, items, makeDoc, poisonDoc, requestsTo, TAG } from './helpers.js';

let emu: Awaited<ReturnType<typeof startEmulator>>;
let control: ReturnType<typeof admin>;
let client: ApiClient;

const target = (over: Partial<SyncTarget> = {}): SyncTarget => ({ kind: 'sync', source: 'acme/inbox', transformTag: TAG, ...over });
const statuses = (outcomes: ItemOutcome[]): Record<string, number> =>
  outcomes.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o.status]: (acc[o.status] ?? 0) + 1 }), {});

/** A deadline long enough for a loaded machine; the slow-response case sets its own. */
const clientOptions = (timeoutMs = 20_000) => ({
  baseUrl: emu.url,
  token: emu.token,
  timeoutMs,
  retry: { baseDelayMs: 2, maxDelayMs: 10, maxRetryAfterMs: 20, maxAttempts: 3 },
});

beforeAll(async () => {
  emu = await startEmulator();
  control = admin(emu.url);
});
afterAll(async () => {
  await emu.stop();
});
beforeEach(async () => {
  await control.reset();
  client = createApiClient(clientOptions());
  await client.ensureSource('acme/inbox');
});

/** Delivers like the delivery loop does: `retry` outcomes are delivered again until none is left. */
async function deliverUntilSettled(all: DeliveryItem[], t: Target, ledger?: MemoryLedger, rounds = 20) {
  const final = new Map<string, ItemOutcome>();
  let pending = all;
  let requests = 0;
  let aiUnits = 0;
  let estimatedAiUnits = 0;
  let unconfirmedAiUnits = 0;
  for (let round = 0; round < rounds && pending.length > 0; round++) {
    const report = await deliverBatch(pending, t, client, ledger);
    requests += report.requests;
    aiUnits += report.aiUnits;
    estimatedAiUnits += report.estimatedAiUnits;
    unconfirmedAiUnits += report.unconfirmedAiUnits;
    report.outcomes.forEach((o) => final.set(o.key, o));
    const retry = new Set(report.outcomes.filter((o) => o.status === 'retry').map((o) => o.key));
    pending = pending.filter((i) => retry.has(i.key));
  }
  return { outcomes: all.map((i) => final.get(i.key)!), requests, pending, aiUnits, estimatedAiUnits, unconfirmedAiUnits };
}

describe('every fault: everything ends delivered, nothing twice, nothing lost', () => {
  const faults: Array<[string, FaultRule]> = [
    ['429 with Retry-After', { endpoint: 'sync-raw-emails', status: 429, retry_after: 1, rate: 0.4, seed: 1 }],
    ['500', { endpoint: 'sync-raw-emails', status: 500, rate: 0.4, seed: 2 }],
    ['503', { endpoint: 'sync-raw-emails', status: 503, rate: 0.4, seed: 3 }],
    ['409', { endpoint: 'sync-raw-emails', status: 409, rate: 0.4, seed: 4 }],
    ['slow responses beyond the deadline', { endpoint: 'sync-raw-emails', delay_ms: 2500, times: 2 }],
    ['dropped connections', { endpoint: 'sync-raw-emails', drop: true, rate: 0.4, seed: 6 }],
    ['dropped after the write', { endpoint: 'sync-raw-emails', drop_after_apply: true, rate: 0.4, seed: 7 }],
    ['HTML error pages', { endpoint: 'sync-raw-emails', status: 502, html: true, rate: 0.4, seed: 8 }],
    ['504 after the write', { endpoint: 'sync-raw-emails', status: 504, apply: true, rate: 0.4, seed: 9 }],
    ['answers cut mid-body after the write', { endpoint: 'sync-raw-emails', truncate: true, rate: 0.4, seed: 10 }],
  ];

  it.each(faults)('%s', async (_name, rule) => {
    let failedAttempts = 0;
    client = createApiClient({
      ...clientOptions(rule.delay_ms === undefined ? undefined : 1000),
      onAttempt: (a) => void (a.error !== undefined && failedAttempts++),
    });
    await control.faults([rule]);
    const docs = Array.from({ length: 200 }, (_, i) => makeDoc(i, { run: 'faults' }));
    const { outcomes, pending, aiUnits, estimatedAiUnits } = await deliverUntilSettled(
      items(docs),
      target({ maxDocuments: 10 }),
      new MemoryLedger(),
    );
    expect(pending).toEqual([]);
    expect(statuses(outcomes)).toEqual({ delivered: 200 });
    await control.clearFaults();
    const stats = await control.stats();
    expect(stats.comments).toBe(200);
    expect(stats.ai_units).toBe(200);
    // Confirmed never exceeds what was billed; with the lost answers' units the estimate matches it.
    expect(aiUnits).toBeLessThanOrEqual(200);
    expect(estimatedAiUnits).toBe(200);
    expect(failedAttempts).toBeGreaterThan(0);
  });

  it('a service down for longer than the retry budget: retry outcomes, later delivered once', async () => {
    await control.faults([{ endpoint: 'sync-raw-emails', status: 503, times: 3 }]);
    const docs = items(Array.from({ length: 30 }, (_, i) => makeDoc(i, { run: 'down' })));
    const first = await deliverBatch(docs, target({ maxDocuments: 10 }), client);
    expect(statuses(first.outcomes)).toEqual({ retry: 30 });
    expect(first.outcomes[0]).toMatchObject({
      code: 'MAILGATE_ERR_API_SERVER',
      message: expect.stringContaining('gave up after 3 attempts') as string,
    });
    expect(first.requests).toBe(1); // the other batches were not sent into a dead service
    const second = await deliverBatch(docs, target({ maxDocuments: 10 }), client);
    expect(statuses(second.outcomes)).toEqual({ delivered: 30 });
    expect(await control.stats()).toMatchObject({ ai_units: 30, comments: 30 });
  });
});

describe('AI units reported: confirmed by the API, and the ledger estimate', () => {
  it('sync: writes whose answers were lost (dropped or 503 after the write) are estimated once, not confirmed', async () => {
    await control.faults([
      { endpoint: 'sync-raw-emails', drop_after_apply: true, rate: 0.3, seed: 21 },
      { endpoint: 'sync-raw-emails', status: 503, apply: true, rate: 0.2, seed: 22 },
    ]);
    const docs = Array.from({ length: 2000 }, (_, i) => makeDoc(i, { run: 'units' }));
    const { outcomes, pending, aiUnits, estimatedAiUnits } = await deliverUntilSettled(
      items(docs),
      target({ maxDocuments: 50 }),
      new MemoryLedger(),
    );
    expect(pending).toEqual([]);
    expect(statuses(outcomes)).toEqual({ delivered: 2000 });
    await control.clearFaults();
    const stats = await control.stats();
    expect(stats.requests['sync-raw-emails']?.dropped).toBeGreaterThan(0);
    expect(stats.requests['sync-raw-emails']?.['503']).toBeGreaterThan(0);
    expect(stats.ai_units).toBe(2000);
    // Confirmed: only what answers said; the lost answers' units are in the estimate.
    expect(aiUnits).toBeLessThan(stats.ai_units);
    expect(estimatedAiUnits).toBe(stats.ai_units);
  });

  it('sync: after a crash that lost the ledger entries, the re-sent documents answered unchanged are estimated, not confirmed', async () => {
    const docs = items(Array.from({ length: 40 }, (_, i) => makeDoc(i, { run: 'crash' })));
    await deliverBatch(docs.slice(0, 25), target(), client); // accepted, then the process died before recording anything
    const report = await deliverBatch(docs, target({ maxDocuments: 10 }), client, new MemoryLedger());
    expect(report.counts).toMatchObject({ new: 15, unchanged: 25 });
    expect((await control.stats()).ai_units).toBe(40);
    expect(report.aiUnits).toBe(15); // what this delivery's answers confirmed
    expect(report.estimatedAiUnits).toBe(40); // the crashed run recorded nothing: the ledger expects all 40
  });

  it('sync: a comment id twice in one delivery is expected to cost once', async () => {
    const doc = makeDoc(1, { run: 'twice' });
    const report = await deliverBatch(
      items([doc, makeDoc(2, { run: 'twice' }), doc]),
      target({ maxDocuments: 2 }),
      client,
      new MemoryLedger(),
    );
    expect(report.requests).toBe(2);
    expect(report.aiUnits).toBe((await control.stats()).ai_units);
    expect(report.aiUnits).toBe(2);
  });
});

describe('poison documents', () => {
  it.each([[128], [1024], [4096]])('one poison document in %i costs at most 2·log2(n)+1 extra requests', async (n) => {
    const docs = Array.from({ length: n }, (_, i) => (i === Math.floor(n / 3) ? poisonDoc(i) : makeDoc(i, { run: `p${n}` })));
    const report = await deliverBatch(items(docs), target({ maxDocuments: n }), client, undefined, { validate: false });
    const bound = 2 * Math.log2(n) + 1;
    expect(statuses(report.outcomes)).toEqual({ delivered: n - 1, rejected: 1 });
    const bad = report.outcomes[Math.floor(n / 3)]!;
    expect(bad).toMatchObject({ status: 'rejected', code: 'MAILGATE_ERR_BATCH_REJECTED', httpStatus: 400 });
    expect((bad as { message: string }).message).toMatch(/65536|plain/);
    expect(report.splitRequests).toBeLessThanOrEqual(bound);
    const stats = await control.stats();
    expect(requestsTo(stats, 'sync-raw-emails')).toBe(report.requests);
    expect(stats).toMatchObject({ ai_units: n - 1, comments: n - 1 });
    expect(report.counts.new).toBe(n - 1);
    expect(report.aiUnits).toBe(n - 1);
  });

  it('a refusal of the whole request (invalid transform tag) costs a handful of requests, halts the delivery, rejects nothing', async () => {
    const docs = Array.from({ length: 4096 }, (_, i) => makeDoc(i, { run: 'tag' }));
    const report = await deliverBatch(items(docs), target({ transformTag: 'bad.0.XXXXXXXX', maxDocuments: 2048 }), client);
    expect(statuses(report.outcomes)).toEqual({ retry: 4096 });
    for (const o of report.outcomes) {
      expect(o).toMatchObject({
        code: 'MAILGATE_ERR_API_REQUEST_REJECTED',
        message: expect.stringContaining("'bad.0.XXXXXXXX' is not a valid transform tag") as string,
      });
    }
    expect(report.requests).toBeLessThanOrEqual(6); // the first batch only: itself, its halves, the probe(s)
    const stats = await control.stats();
    expect(requestsTo(stats, 'sync-raw-emails')).toBe(report.requests);
    expect(stats).toMatchObject({ ai_units: 0, comments: 0 });
  });

  it('documents not isolated within the split budget are left for retry, not rejected', async () => {
    const docs = Array.from({ length: 64 }, (_, i) => (i % 8 === 3 ? poisonDoc(i) : makeDoc(i, { run: 'budget' })));
    const report = await deliverBatch(items(docs), target(), client, undefined, { validate: false, maxSplitRequests: 4 });
    const unsplit = report.outcomes.filter((o) => o.status === 'retry');
    expect(unsplit.length).toBeGreaterThan(0);
    expect(unsplit.every((o) => 'code' in o && o.code === 'MAILGATE_ERR_BATCH_NOT_ISOLATED')).toBe(true);
    expect(
      report.outcomes.filter((o) => o.status === 'rejected').every((o) => 'code' in o && o.code === 'MAILGATE_ERR_BATCH_REJECTED'),
    ).toBe(true);
  });

  it('with validation on, a schema-invalid document is refused locally and costs no request', async () => {
    const docs = [makeDoc(1, { run: 'v' }), poisonDoc(2), makeDoc(3, { run: 'v' })];
    const report = await deliverBatch(items(docs), target(), client);
    expect(report.outcomes.map((o) => o.status)).toEqual(['delivered', 'rejected', 'delivered']);
    expect(report.outcomes[1]).toMatchObject({ code: 'MAILGATE_ERR_DOCUMENT_INVALID' });
    expect(report.requests).toBe(1);
  });

  it('a document larger than the request byte limit is refused before packing', async () => {
    const big = makeDoc(1, { body: 'y'.repeat(5000), run: 'big' });
    const report = await deliverBatch(items([big, makeDoc(2, { run: 'big' })]), target({ maxRequestBytes: 4096 }), client);
    expect(report.outcomes[0]).toMatchObject({ status: 'rejected', code: 'MAILGATE_ERR_BATCH_DOCUMENT_TOO_LARGE' });
    expect(report.outcomes[1]!.status).toBe('delivered');
  });
});

describe('ledger and billing', () => {
  it('a second identical delivery sends nothing; a property change is free; a text change costs 1', async () => {
    const ledger = new MemoryLedger();
    const docs = Array.from({ length: 50 }, (_, i) => makeDoc(i, { run: 'l', props: { 'string:Mailbox': 'support' } }));
    const first = await deliverBatch(items(docs), target(), client, ledger);
    expect(first).toMatchObject({ aiUnits: 50, estimatedAiUnits: 50, requests: 1 });
    const before = await control.stats();

    const second = await deliverBatch(items(docs), target(), client, ledger);
    expect(statuses(second.outcomes)).toEqual({ unchanged: 50 });
    expect(second.requests).toBe(0);
    expect(await control.stats()).toEqual(before);

    const changed = [
      { ...docs[0]!, user_properties: { 'string:Mailbox': 'sales' } },
      makeDoc(1, { run: 'l', props: { 'string:Mailbox': 'support' }, body: 'new text' }),
      ...docs.slice(2),
    ];
    const dry = await deliverBatch(items(changed), target(), client, ledger, { dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, requests: 1, estimatedAiUnits: 1, aiUnits: 0 });
    expect(dry.outcomes.slice(0, 2)).toEqual([
      { key: 'k0', status: 'delivered', estimatedAiUnits: 0 },
      { key: 'k1', status: 'delivered', estimatedAiUnits: 1 },
    ]);
    expect(requestsTo(await control.stats(), 'sync-raw-emails')).toBe(requestsTo(before, 'sync-raw-emails'));

    const third = await deliverBatch(items(changed), target(), client, ledger);
    expect(statuses(third.outcomes)).toEqual({ delivered: 2, unchanged: 48 });
    expect(third.counts).toMatchObject({ updated: 2, updated_properties_only: 1, updated_text_changed: 1 });
    expect(third.aiUnits).toBe(1);
    expect((await control.stats()).ai_units).toBe(51);
  });

  it('a dry run without a ledger estimates one unit per document and sends nothing', async () => {
    const report = await deliverBatch(items([makeDoc(1), makeDoc(2), makeDoc(3)]), target({ maxDocuments: 2 }), client, undefined, {
      dryRun: true,
    });
    expect(report).toMatchObject({ requests: 2, estimatedAiUnits: 3, aiUnits: 0 });
    expect(requestsTo(await control.stats(), 'sync-raw-emails')).toBe(0);
  });
});

describe('property conflicts never fail a request', () => {
  const docs = () => [
    makeDoc(1, { run: 'pc', props: { 'string:Mailbox': 'a' } }),
    makeDoc(2, { run: 'pc', props: { 'string:Sender': 'Robot', 'string:Mailbox': 'b' } }),
    makeDoc(3, { run: 'pc' }),
  ];
  const stored = async (doc: { comment_id?: string }) =>
    (await api(emu.url, emu.token, 'GET', `/api/v1/sources/acme/inbox/comments/${doc.comment_id}`)).body.comment?.user_properties as Record<
      string,
      unknown
    >;

  it('sync reject: the conflicting document is refused locally, the others delivered', async () => {
    const d = docs();
    const report = await deliverBatch(items(d), target({ onPropertyConflict: 'reject' }), client);
    expect(report.outcomes.map((o) => o.status)).toEqual(['delivered', 'rejected', 'delivered']);
    expect(report.outcomes[1]).toMatchObject({ code: 'MAILGATE_ERR_PROPERTY_CONFLICT' });
    expect((await control.stats()).requests['sync-raw-emails']).toEqual({ 200: 1 });
  });

  it('sync override: the client value replaces the generated one', async () => {
    const d = docs();
    const report = await deliverBatch(items(d), target({ onPropertyConflict: 'override' }), client);
    expect(statuses(report.outcomes)).toEqual({ delivered: 3 });
    expect(report.outcomes[1]).toMatchObject({ warnings: [expect.objectContaining({ code: 'MAILGATE_WARN_PROPERTY_OVERRIDDEN' })] });
    expect((await stored(d[1]!))['string:Sender']).toBe('Robot');
    expect((await control.stats()).requests['sync-raw-emails']).toEqual({ 200: 1 });
  });

  it('sync drop: the property is removed and the generated one kept', async () => {
    const d = docs();
    const report = await deliverBatch(items(d), target({ onPropertyConflict: 'drop' }), client);
    expect(statuses(report.outcomes)).toEqual({ delivered: 3 });
    expect((await stored(d[1]!))['string:Sender']).not.toBe('Robot');
    expect((await stored(d[1]!))['string:Mailbox']).toBe('b');
  });

  describe('predict', () => {
    beforeEach(async () => {
      expect((await api(emu.url, emu.token, 'PUT', '/api/v1/datasets/acme/triage', { dataset: {} })).status).toBe(200);
    });
    const predictTarget = (onPropertyConflict: 'reject' | 'override' | 'drop') =>
      ({ kind: 'predict', dataset: 'acme/triage', version: 'live', transformTag: TAG, onPropertyConflict }) as const;

    it.each(['reject', 'override'] as const)('%s: the conflicting document is refused locally', async (rule) => {
      const report = await deliverBatch(items(docs()), predictTarget(rule), client);
      expect(report.outcomes.map((o) => o.status)).toEqual(['delivered', 'rejected', 'delivered']);
      expect(report.outcomes[1]).toMatchObject({ code: 'MAILGATE_ERR_PROPERTY_CONFLICT' });
      expect((await control.stats()).requests['predict-raw-emails']).toEqual({ 200: 1 });
    });

    it('drop: every document predicted', async () => {
      const report = await deliverBatch(items(docs()), predictTarget('drop'), client);
      expect(statuses(report.outcomes)).toEqual({ delivered: 3 });
      expect((await control.stats()).requests['predict-raw-emails']).toEqual({ 200: 1 });
    });
  });
});

describe('predict', () => {
  beforeEach(async () => {
    await api(emu.url, emu.token, 'PUT', '/api/v1/datasets/acme/triage', { dataset: {} });
  });

  it('maps predictions back to each document in order, with threshold and per-label thresholds', async () => {
    const bodies = [
      'I want a refund, I was charged twice',
      'My password reset is not working',
      'Thank you, great service',
      'nothing relevant here',
    ];
    const docs = bodies.map((body, i) => makeDoc(i, { body, run: 'pr' }));
    const t: PredictTarget = {
      kind: 'predict',
      dataset: 'acme/triage',
      version: 1,
      transformTag: TAG,
      threshold: 0.3,
      maxDocuments: 2,
      labels: [{ name: ['Billing', 'Refund'], threshold: 0.1 }, { name: ['Praise'] }, { name: ['Support', 'Password Reset'] }],
    };
    const report = await deliverBatch(items(docs), t, client);
    expect(report.requests).toBe(2);
    expect(report.aiUnits).toBe(4);
    for (const [i, outcome] of report.outcomes.entries()) {
      const alone = await client.predictRawEmails('acme/triage', 1, {
        documents: [docs[i]!],
        transform_tag: TAG,
        threshold: 0.3,
        labels: t.labels,
      });
      expect(outcome).toMatchObject({ status: 'delivered', predictions: alone.predictions[0] });
    }
    const names = report.outcomes.map((o) => (o.status === 'delivered' ? o.predictions!.map((p) => p.name.join(' > ')) : []));
    expect(names[0]).toContain('Billing > Refund');
    expect(names[1]).toContain('Support > Password Reset');
    expect(names[2]).toContain('Praise');
    expect(names[3]).toEqual([]);
  });

  describe('under faults: every document delivered once, its own predictions in order, billing bounded', () => {
    const bodies = [
      'I want a refund, I was charged twice',
      'My password reset is not working',
      'Thank you, great service',
      'nothing relevant here',
      'my parcel is late, still waiting',
    ];
    const faults: Array<[string, FaultRule, boolean]> = [
      // name, rule, whether a failed attempt may have been processed (and billed)
      ['429 with Retry-After', { endpoint: 'predict-raw-emails', status: 429, retry_after: 1, rate: 0.4, seed: 31 }, false],
      ['503', { endpoint: 'predict-raw-emails', status: 503, rate: 0.4, seed: 32 }, true],
      ['dropped connections', { endpoint: 'predict-raw-emails', drop: true, rate: 0.4, seed: 33 }, true],
      ['dropped after the service answered', { endpoint: 'predict-raw-emails', drop_after_apply: true, rate: 0.4, seed: 34 }, true],
      ['answers cut mid-body', { endpoint: 'predict-raw-emails', truncate: true, rate: 0.4, seed: 35 }, true],
    ];

    it.each(faults)('%s', async (_name, rule, processedMaybe) => {
      const docs = Array.from({ length: 60 }, (_, i) => makeDoc(i, { run: 'pf', body: bodies[i % bodies.length] }));
      const t: PredictTarget = { kind: 'predict', dataset: 'acme/triage', version: 1, transformTag: TAG, threshold: 0.3, maxDocuments: 7 };
      await control.faults([rule]);
      const { outcomes, pending, aiUnits, unconfirmedAiUnits } = await deliverUntilSettled(items(docs), t);
      await control.clearFaults();
      expect(pending).toEqual([]);
      expect(outcomes.map((o) => o.key)).toEqual(docs.map((_, i) => `k${i}`));
      expect(statuses(outcomes)).toEqual({ delivered: 60 });
      const billed = (await control.stats()).ai_units;
      expect(aiUnits).toBe(60);
      expect(billed).toBeGreaterThanOrEqual(aiUnits);
      expect(billed).toBeLessThanOrEqual(aiUnits + unconfirmedAiUnits);
      if (!processedMaybe) expect(unconfirmedAiUnits).toBe(0);
      if (processedMaybe) expect(unconfirmedAiUnits).toBeGreaterThan(0);
      const clean = await client.predictRawEmails('acme/triage', 1, { documents: docs, transform_tag: TAG, threshold: 0.3 });
      outcomes.forEach((o, i) => expect(o).toMatchObject({ status: 'delivered', predictions: clean.predictions[i], model: clean.model }));
    });
  });

  it('an unknown model version is a 404: every item is left for retry, none rejected', async () => {
    const report = await deliverBatch(
      items([makeDoc(1)]),
      { kind: 'predict', dataset: 'acme/triage', version: 99, transformTag: TAG },
      client,
    );
    expect(report.outcomes).toEqual([expect.objectContaining({ status: 'retry', code: 'MAILGATE_ERR_API_NOT_FOUND' })]);
  });
});

describe('deliverBatch packing (what delivery hands each claimed batch to)', () => {
  it('packs by count: 60 documents at 25 per request make 3 requests; outcomes in input order, per target', async () => {
    await api(emu.url, emu.token, 'PUT', '/api/v1/datasets/acme/triage', { dataset: {} });
    const syncs = Array.from({ length: 60 }, (_, i) => ({ key: `s${i}`, document: makeDoc(i, { run: 'b' }) }));
    const predicts = Array.from({ length: 3 }, (_, i) => ({ key: `p${i}`, document: makeDoc(i, { run: 'b', body: 'refund please' }) }));
    const inbox = await deliverBatch(syncs, target({ maxDocuments: 25 }), client, undefined, { concurrency: 2 });
    const triage = await deliverBatch(predicts, { kind: 'predict', dataset: 'acme/triage', version: 'staging', transformTag: TAG }, client);
    const outcomes = [...inbox.outcomes, ...triage.outcomes];
    expect(outcomes.map((o) => o.key)).toEqual([...syncs.map((i) => i.key), 'p0', 'p1', 'p2']);
    expect(outcomes.every((o) => o.status === 'delivered')).toBe(true);
    expect(inbox.requests).toBe(3);
    expect(triage.requests).toBe(1);
    expect((await control.stats()).comments).toBe(60);
  });

  it('packs by bytes: 30 documents of ~60 KB, 3 per 200 KB request, make 10 requests', async () => {
    const maxRequestBytes = 200 * 1024;
    const docs = Array.from({ length: 30 }, (_, i) => makeDoc(i, { run: 'bytes', body: `${i} `.padEnd(60_000, 'x') }));
    const size = Buffer.byteLength(JSON.stringify(docs[0]));
    expect(3 * size + 2).toBeLessThan(maxRequestBytes - 200); // three fit with the envelope, four do not
    expect(4 * size).toBeGreaterThan(maxRequestBytes);
    const batch = docs.map((document, i) => ({ key: `b${i}`, document }));
    const report = await deliverBatch(batch, target({ maxRequestBytes }), client, undefined, { concurrency: 2 });
    expect(report.outcomes.every((o) => o.status === 'delivered')).toBe(true);
    expect(report.requests).toBe(10);
    expect(requestsTo(await control.stats(), 'sync-raw-emails')).toBe(10);
  });
});
