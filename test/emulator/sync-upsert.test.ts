import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GENERATED_PROPERTIES } from '../../src/model/index.js';
import { buildComment } from '../../src/preview/comment.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { client, hex, mail, setup, SYNC, TAG, type Client } from './helpers.js';

let emu: StartedEmulator;
let api: Client;
let clock = Date.parse('2026-01-01T00:00:00Z');

beforeEach(async () => {
  emu = await startEmulator({ now: () => new Date(clock) });
  api = client(emu.url, emu.token);
  await setup(api);
});
afterEach(() => emu.stop());

const sync = (documents: unknown[], extra: Record<string, unknown> = {}) => api.post(SYNC, { documents, transform_tag: TAG, ...extra });
const counts = (json: any) => ({
  new: json.new,
  updated: json.updated,
  updated_properties_only: json.updated_properties_only,
  updated_text_changed: json.updated_text_changed,
  unchanged: json.unchanged,
});

describe('upsert counts and AI units', () => {
  it('new, then unchanged, then properties-only and text changes', async () => {
    const a = mail({ commentId: 'a1', body: 'first' });
    const b = mail({ commentId: 'b1', body: 'second' });
    const c = mail({ commentId: 'c1', body: 'third' });

    const first = await sync([a, b, c]);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ status: 'ok', new: 3, updated: 0, updated_properties_only: 0, updated_text_changed: 0, unchanged: 0 });
    expect(emu.emulator.stats()).toMatchObject({ ai_units: 3, comments: 3 });

    const again = await sync([a, b, c]);
    expect(counts(again.json)).toEqual({ new: 0, updated: 0, updated_properties_only: 0, updated_text_changed: 0, unchanged: 3 });
    expect(emu.emulator.stats().ai_units).toBe(3);

    const props = { ...b, user_properties: { 'string:Mailbox': 'support' } };
    const text = mail({ commentId: 'c1', body: 'third, edited' });
    const changed = await sync([a, props, text]);
    expect(counts(changed.json)).toEqual({ new: 0, updated: 2, updated_properties_only: 1, updated_text_changed: 1, unchanged: 1 });
    expect(emu.emulator.stats()).toMatchObject({ ai_units: 4, comments: 3 });
  });

  it('the same email twice in one request: new then unchanged, one AI unit', async () => {
    const a = mail({ commentId: 'd1' });
    const r = await sync([a, a]);
    expect(counts(r.json)).toEqual({ new: 1, updated: 0, updated_properties_only: 0, updated_text_changed: 0, unchanged: 1 });
    expect(emu.emulator.stats()).toMatchObject({ ai_units: 1, comments: 1 });
  });

  it('two versions in one request: the last wins, both texts are billed', async () => {
    const r = await sync([mail({ commentId: 'e1', body: 'v1' }), mail({ commentId: 'e1', body: 'v2' })], { include_comments: true });
    expect(counts(r.json)).toEqual({ new: 1, updated: 1, updated_properties_only: 0, updated_text_changed: 1, unchanged: 0 });
    expect(emu.emulator.stats().ai_units).toBe(2);
    const stored = await api.get('/api/v1/sources/acme/inbox/comments/e1');
    expect(stored.json.comment.messages[0].body.text).toContain('v2');
    expect(r.json.comments.map((c: any) => c.messages[0].body.text)).toEqual([
      expect.stringContaining('v1'),
      expect.stringContaining('v2'),
    ]);
  });

  it('the comment id comes from the Message-ID when no comment_id is given', async () => {
    const r = await sync([mail({ messageId: '<abc@example.com>' })], { include_comments: true });
    const id = r.json.comments[0].id;
    expect(id).toBe(hex('<abc@example.com>'));
    expect((await api.get(`/api/v1/sources/acme/inbox/comments/${id}`)).status).toBe(200);
  });

  it('the same comment id in two sources is two comments, billed twice', async () => {
    await api.put('/api/v1/sources/acme/archive', { source: {} });
    const a = mail({ commentId: 'f1' });
    await sync([a]);
    const other = await api.post('/api/v1/sources/acme/archive/sync-raw-emails', { documents: [a], transform_tag: TAG });
    expect(other.json.new).toBe(1);
    expect(emu.emulator.stats()).toMatchObject({ ai_units: 2, comments: 2 });
  });

  it('a deleted comment synced again is new and billed again', async () => {
    const a = mail({ commentId: 'f2' });
    await sync([a]);
    expect((await api.del('/api/v1/sources/acme/inbox/comments?id=f2')).json).toEqual({ status: 'ok' });
    expect((await sync([a])).json.new).toBe(1);
    expect(emu.emulator.stats().ai_units).toBe(2);
  });
});

describe('include_comments', () => {
  it('is absent unless asked for', async () => {
    const r = await sync([mail()]);
    expect(r.json).not.toHaveProperty('comments');
  });

  it('returns the stored comments in document order, built by the preview code', async () => {
    const docs = [
      mail({ commentId: 'bb', subject: 'Second' }),
      mail({ commentId: 'aa', subject: 'First', props: { 'string:Mailbox': 'x' } }),
    ];
    const r = await sync(docs, { include_comments: true });
    const source = (await api.get('/api/v1/sources/acme/inbox')).json.source;
    expect(r.json.comments.map((c: any) => c.id)).toEqual(['bb', 'aa']);
    docs.forEach((doc, i) => {
      const got = r.json.comments[i];
      const { comment } = buildComment(doc);
      expect(got).toMatchObject({ ...comment, uid: `${source.id}.${doc.comment_id}`, source_id: source.id });
      expect(got.created_at).toBe('2026-01-01T00:00:00.000Z');
      expect(got.last_modified).toBe('2026-01-01T00:00:00.000Z');
    });
  });

  it('keeps created_at and moves last_modified on an update', async () => {
    const one = mail({ commentId: 'cc', body: 'one', messageId: '<cc@example.com>' });
    await sync([one]);
    clock += 60_000;
    const unchanged = await sync([one], { include_comments: true });
    expect(unchanged.json.comments[0].last_modified).toBe('2026-01-01T00:00:00.000Z');
    const r = await sync([mail({ commentId: 'cc', body: 'two', messageId: '<cc@example.com>' })], { include_comments: true });
    expect(r.json.comments[0].created_at).toBe('2026-01-01T00:00:00.000Z');
    expect(r.json.comments[0].last_modified).toBe('2026-01-01T00:01:00.000Z');
  });
});

describe('client properties colliding with generated ones', () => {
  for (const [name, type] of Object.entries(GENERATED_PROPERTIES)) {
    it(`${type}:${name} fails the whole request with 422`, async () => {
      const value = type === 'number' ? 1 : 'client';
      const r = await sync([mail(), mail({ props: { [`${type}:${name}`]: value } })]);
      expect(r.status).toBe(422);
      expect(r.json.message).toMatch(/^documents\[1\]: user property/);
      expect(emu.emulator.stats()).toMatchObject({ comments: 0, ai_units: 0 });
    });
  }

  it('a collision under the other type prefix is still a collision', async () => {
    expect((await sync([mail({ props: { 'number:Sender': 5 } })])).status).toBe(422);
  });

  it('is accepted when listed in override_user_properties, and the client value wins', async () => {
    const r = await sync([mail({ commentId: 'dd', props: { 'string:Sender': 'overridden@example.com' } })], {
      override_user_properties: ['Sender'],
      include_comments: true,
    });
    expect(r.status).toBe(200);
    expect(r.json.comments[0].user_properties['string:Sender']).toBe('overridden@example.com');
  });

  it('listing another name does not help', async () => {
    const r = await sync([mail({ props: { 'string:Sender': 'x' } })], { override_user_properties: ['Thread'] });
    expect(r.status).toBe(422);
  });
});

describe('returned comments carry updated_at (spec) beside last_modified (notes)', () => {
  it('in include_comments and in GET comment', async () => {
    const r = await sync([mail({ commentId: 'a0a0' })], { include_comments: true });
    expect(r.json.comments[0]).toMatchObject({ updated_at: new Date(clock).toISOString(), last_modified: new Date(clock).toISOString() });
    const got = await api.get('/api/v1/sources/acme/inbox/comments/a0a0');
    expect(got.json.comment).toMatchObject({ updated_at: got.json.comment.last_modified });
  });

  it("commentsShape 'with-thread-properties' answers {comment, thread_properties} per document (the spec's shape)", async () => {
    const other = await startEmulator({ now: () => new Date(clock), commentsShape: 'with-thread-properties' });
    try {
      const c = client(other.url, other.token);
      await setup(c);
      const root = mail({ commentId: 'c1', messageId: '<root@example.com>', date: 'Tue, 05 Mar 2024 10:00:00 +0000' });
      const reply = mail({
        commentId: 'c2',
        from: 'Bob <bob@example.com>',
        inReplyTo: '<root@example.com>',
        date: 'Tue, 05 Mar 2024 11:00:00 +0000',
      });
      const r = await c.post(SYNC, { documents: [root, reply], transform_tag: TAG, include_comments: true });
      expect(
        r.json.comments.map((x: any) => [x.comment.id, x.thread_properties.thread_position, x.thread_properties.num_messages]),
      ).toEqual([
        ['c1', 0, 2],
        ['c2', 1, 2],
      ]);
      expect(r.json.comments[1].comment).toMatchObject({ updated_at: new Date(clock).toISOString() });
    } finally {
      await other.stop();
    }
  });
});
