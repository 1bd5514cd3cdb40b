import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAXONOMY } from '../../src/emulator/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { client, mail, PREDICT, setup, TAG, type Client } from './helpers.js';

let emu: StartedEmulator;
let api: Client;

beforeAll(async () => {
  emu = await startEmulator();
  api = client(emu.url, emu.token);
  await setup(api, { dataset: true });
});
afterAll(() => emu.stop());

const refund = () => mail({ subject: 'Refund request', body: 'I want a refund for invoice 123. Please refund me.' });
const predict = (documents: unknown[], extra: Record<string, unknown> = {}, version: string | number = 'live') =>
  api.post(PREDICT(version), { documents, transform_tag: TAG, ...extra });

describe('toy model', () => {
  it('scores keyword hits: 1 - 0.5^(body hits + 2 x subject hits), parents take the best child', async () => {
    const r = await predict([refund()]);
    expect(r.status).toBe(200);
    expect(r.json.predictions).toEqual([
      [
        { name: ['Billing'], probability: 0.9375, sentiment: 0 },
        { name: ['Billing', 'Refund'], probability: 0.9375, sentiment: 0 },
        { name: ['Billing', 'Invoice'], probability: 0.5, sentiment: 0 },
      ],
    ]);
  });

  it('is deterministic and answers in document order', async () => {
    const docs = [
      refund(),
      mail({ subject: 'Password', body: 'I am locked out, please reset my password.' }),
      mail({ body: 'Nothing to see.' }),
    ];
    const a = await predict(docs);
    const b = await predict([...docs].reverse());
    expect(a.json.predictions).toEqual([...b.json.predictions].reverse());
    expect(a.json.predictions[1][0].name).toEqual(['Support']);
    expect(a.json.predictions[2]).toEqual([]);
  });

  it('sentiment from positive and negative words, on every returned label', async () => {
    const r = await predict([mail({ subject: 'Thanks', body: 'Thanks, great service but the app is broken.' })]);
    const labels = r.json.predictions[0];
    expect(labels.length).toBeGreaterThan(0);
    // positive: thanks, thanks, great; negative: broken -> (3 - 1) / 4
    for (const l of labels) expect(l.sentiment).toBe(0.5);
    expect(r.json.label_properties[0]).toEqual([{ property_id: '0000000000000001', property_name: 'tone', value: 0.5 }]);
  });

  it('a dataset without sentiment returns no sentiment and no label properties', async () => {
    await api.put('/api/v1/datasets/acme/plain', { dataset: { has_sentiment: false } });
    const r = await api.post('/api/v1/datasets/acme/plain/labellers/1/predict-raw-emails', { documents: [refund()], transform_tag: TAG });
    expect(r.json.predictions[0][0]).toEqual({ name: ['Billing'], probability: 0.9375 });
    expect(r.json.label_properties).toEqual([[]]);
  });

  it('finds dates and email addresses as entities', async () => {
    const r = await predict([mail({ body: 'Call me on 2024-03-05 or write to Bob@Example.com by 7/3/2024.' })]);
    const entities = r.json.entities[0];
    expect(entities.map((e: any) => [e.kind, e.formatted_value])).toEqual([
      ['date', '2024-03-05'],
      ['date', '2024-03-07'],
      ['email_address', 'bob@example.com'],
    ]);
    expect(entities[0].span).toMatchObject({
      content_part: 'body',
      message_index: 0,
      char_start: 11,
      char_end: 21,
      utf16_byte_start: 22,
      utf16_byte_end: 42,
    });
  });
});

describe('thresholds', () => {
  it('default 0.25; a number filters with >=', async () => {
    const high = await predict([refund()], { threshold: 0.6 });
    expect(high.json.predictions[0].map((l: any) => l.name.join(' > '))).toEqual(['Billing', 'Billing > Refund']);
    const exact = await predict([refund()], { threshold: 0.5 });
    expect(exact.json.predictions[0]).toHaveLength(3);
  });

  it('0 returns every label the model version knows', async () => {
    const v1 = await predict([refund()], { threshold: 0 }, 1);
    const v2 = await predict([refund()], { threshold: 0 }, 2);
    const leaves = (v: number) => TAXONOMY.filter((l) => l.since <= v);
    const parents = (v: number) =>
      new Set(
        leaves(v)
          .filter((l) => l.name.length > 1)
          .map((l) => l.name[0]),
      ).size;
    expect(v1.json.predictions[0]).toHaveLength(leaves(1).length + parents(1));
    expect(v2.json.predictions[0]).toHaveLength(leaves(2).length + parents(2));
    expect(v2.json.predictions[0].map((l: any) => l.name.join(' > '))).toContain('Sales > Quote');
    expect(v1.json.predictions[0].map((l: any) => l.name.join(' > '))).not.toContain('Sales > Quote');
  });

  it('auto uses each label’s balanced auto threshold and names the levels met', async () => {
    const r = await predict([refund()], { threshold: 'auto' });
    expect(r.json.predictions[0]).toEqual([
      { name: ['Billing'], probability: 0.9375, sentiment: 0, auto_thresholds: ['high_recall', 'balanced', 'high_precision'] },
      { name: ['Billing', 'Refund'], probability: 0.9375, sentiment: 0, auto_thresholds: ['high_recall', 'balanced', 'high_precision'] },
      { name: ['Billing', 'Invoice'], probability: 0.5, sentiment: 0, auto_thresholds: ['high_recall', 'balanced'] },
    ]);
  });

  it('labels restricts the answer; a label threshold overrides the top-level one', async () => {
    const only = await predict([refund()], { labels: [{ name: ['Billing', 'Invoice'], threshold: 0.4 }], threshold: 0.9 });
    expect(only.json.predictions[0].map((l: any) => l.name)).toEqual([['Billing', 'Invoice']]);
    const inherits = await predict([refund()], { labels: [{ name: ['Billing', 'Invoice'] }], threshold: 0.6 });
    expect(inherits.json.predictions[0]).toEqual([]);
    const unknown = await predict([refund()], { labels: [{ name: ['No', 'Such'] }] });
    expect(unknown.json.predictions[0]).toEqual([]);
  });
});

describe('model versions', () => {
  it('live is 1, staging is 2, integers address a version; time is fixed', async () => {
    const ds = (await api.get('/api/v1/datasets/acme/triage')).json.dataset;
    expect((await predict([refund()], {}, 'live')).json.model).toEqual({ version: 1, time: ds.created_at });
    expect((await predict([refund()], {}, 'staging')).json.model).toEqual({ version: 2, time: ds.created_at });
    expect((await predict([refund()], {}, 2)).json.model.version).toBe(2);
    expect((await predict([refund()], {}, 0)).status).toBe(404);
  });

  it('live and staging are configurable', async () => {
    const other = await startEmulator({ modelVersions: 5, liveVersion: 4, stagingVersion: 5 });
    try {
      const c = client(other.url, other.token);
      await setup(c, { dataset: true });
      const r = await c.post(PREDICT('live'), { documents: [refund()], transform_tag: TAG });
      expect(r.json.model.version).toBe(4);
      expect((await c.post(PREDICT(5), { documents: [refund()], transform_tag: TAG })).status).toBe(200);
      expect((await c.post(PREDICT(6), { documents: [refund()], transform_tag: TAG })).status).toBe(404);
    } finally {
      await other.stop();
    }
  });
});

describe('billing and comments', () => {
  it('bills 1 AI unit per document and stores nothing', async () => {
    const before = emu.emulator.stats();
    await predict([refund(), refund(), mail()]);
    const after = emu.emulator.stats();
    expect(after.ai_units - before.ai_units).toBe(3);
    expect(after.comments).toBe(before.comments);
  });

  it('include_comments returns the parsed comments in document order', async () => {
    const docs = [mail({ commentId: 'ab', subject: 'One' }), mail({ commentId: 'cd', subject: 'Two' })];
    const r = await predict(docs, { include_comments: true });
    expect(r.json.comments.map((c: any) => [c.id, c.messages[0].subject.text, c.text_format])).toEqual([
      ['ab', 'One', 'plain'],
      ['cd', 'Two', 'plain'],
    ]);
    for (const c of r.json.comments) expect(c).toHaveProperty('thread_id');
  });

  it('an email without Message-ID or comment_id can still be predicted', async () => {
    expect((await predict([mail({ messageId: null })])).status).toBe(200);
  });
});

describe('predict-raw-emails validation', () => {
  const rejected = async (status: number, body: Record<string, unknown>, message?: RegExp) => {
    const before = emu.emulator.stats().ai_units;
    const r = await api.post(PREDICT(), { documents: [refund()], transform_tag: TAG, ...body });
    expect(r.status).toBe(status);
    expect(r.json.status).toBe('error');
    if (message) expect(r.json.message).toMatch(message);
    expect(emu.emulator.stats().ai_units).toBe(before);
  };
  it('at most 4096 documents', () =>
    rejected(
      400,
      { documents: Array.from({ length: 4097 }, () => ({ raw_email: { headers: { raw: 'A: b' }, body: { plain: 'x' } } })) },
      /4096/,
    ));
  it('an empty list is answered with no predictions and bills nothing', async () => {
    const before = emu.emulator.stats().ai_units;
    const r = await api.post(PREDICT(), { documents: [], transform_tag: TAG });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'ok', predictions: [], model: { version: 1 } });
    expect(emu.emulator.stats().ai_units).toBe(before);
  });
  it('threshold above 1 is 400', () => rejected(400, { threshold: 1.5 }));
  it('threshold must be a number or auto', () => rejected(400, { threshold: 'high' }));
  it('labels need a non-empty name path', () => rejected(400, { labels: [{ name: [] }] }));
  it('label thresholds are 0..1', () => rejected(400, { labels: [{ name: ['Billing'], threshold: 2 }] }));
  it('there is no override list on predict', () => rejected(400, { override_user_properties: ['Sender'] }));
  it('a client property colliding with a generated one is 422', () =>
    rejected(422, { documents: [mail({ props: { 'string:Thread': 'x' } })] }, /conflicts with a generated property/));
  it('an unknown transform tag is 422', () => rejected(422, { transform_tag: 'bogus.0.AAAAAAAA' }, /is not a valid transform tag/));
  it('a missing transform tag is 422', () => rejected(422, { transform_tag: undefined }));
});

describe('labelNames', () => {
  it("'string' answers label names as `Parent > Child` strings (notes §3.2)", async () => {
    const other = await startEmulator({ labelNames: 'string' });
    try {
      const c = client(other.url, other.token);
      await setup(c, { dataset: true });
      const r = await c.post(PREDICT(), { documents: [refund()], transform_tag: TAG });
      expect(r.json.predictions[0].map((l: { name: unknown }) => l.name)).toEqual(['Billing', 'Billing > Refund', 'Billing > Invoice']);
    } finally {
      await other.stop();
    }
  });
});
