import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { client, hex, mail, setup, SYNC, TAG, type Client } from './helpers.js';

let emu: StartedEmulator;
let api: Client;

beforeAll(async () => {
  emu = await startEmulator();
  api = client(emu.url, emu.token);
  await setup(api);
});
afterAll(() => emu.stop());

describe('sources', () => {
  it('create returns the source record with defaults', async () => {
    const r = await api.put('/api/v1/sources/proj.one/mail_box-1', { source: { description: 'd', language: 'de' } });
    expect(r.status).toBe(200);
    expect(r.json.source).toMatchObject({
      owner: 'proj.one',
      name: 'mail_box-1',
      title: '',
      description: 'd',
      language: 'de',
      should_translate: false,
      sensitive_properties: [],
    });
    expect(r.json.source.id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('creating an existing source is 409', async () => {
    const r = await api.put('/api/v1/sources/acme/inbox', { source: {} });
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ status: 'error', message: "Source 'acme/inbox' already exists." });
  });

  it('only en and de are languages', async () => {
    expect((await api.put('/api/v1/sources/acme/fr', { source: { language: 'fr' } })).status).toBe(400);
  });

  it('a source name outside [A-Za-z0-9_-] is 400', async () => {
    expect((await api.put('/api/v1/sources/acme/bad.name', { source: {} })).status).toBe(400);
  });

  it('get by name, by id, per project and all', async () => {
    const one = (await api.get('/api/v1/sources/acme/inbox')).json.source;
    expect((await api.get(`/api/v1/sources/id:${one.id}`)).json.source).toEqual(one);
    const project = await api.get('/api/v1/sources/acme');
    expect(project.json.sources.map((s: any) => s.name)).toContain('inbox');
    expect(project.json.sources.every((s: any) => s.owner === 'acme')).toBe(true);
    const all = await api.get('/api/v1/sources');
    expect(all.json.sources.length).toBeGreaterThanOrEqual(project.json.sources.length);
  });

  it('update changes the given fields; language is create-only', async () => {
    const r = await api.post('/api/v1/sources/acme/inbox', { source: { title: 'Support inbox' } });
    expect(r.json.source.title).toBe('Support inbox');
    expect((await api.post('/api/v1/sources/acme/inbox', { source: { language: 'de' } })).status).toBe(400);
    expect((await api.post('/api/v1/sources/acme/nope', { source: {} })).status).toBe(404);
  });

  it('delete by id removes the source and its comments', async () => {
    const s = (await api.put('/api/v1/sources/acme/temp', { source: {} })).json.source;
    await api.post('/api/v1/sources/acme/temp/sync-raw-emails', { documents: [mail()], transform_tag: TAG });
    const before = emu.emulator.stats().comments;
    expect((await api.del(`/api/v1/sources/id:${s.id}`)).json).toEqual({ status: 'ok' });
    expect((await api.get('/api/v1/sources/acme/temp')).status).toBe(404);
    expect(emu.emulator.stats().comments).toBe(before - 1);
  });

  it('autoCreateSources creates a source on first sync', async () => {
    const auto = await startEmulator({ autoCreateSources: true });
    try {
      const c = client(auto.url, auto.token);
      expect((await c.post('/api/v1/sources/p/new/sync-raw-emails', { documents: [mail()], transform_tag: TAG })).status).toBe(200);
      expect((await c.get('/api/v1/sources/p/new')).status).toBe(200);
    } finally {
      await auto.stop();
    }
  });
});

describe('comments', () => {
  it('get one returns the stored comment', async () => {
    await api.post(SYNC, { documents: [mail({ commentId: 'c0ffee', subject: 'Stored' })], transform_tag: TAG });
    const r = await api.get('/api/v1/sources/acme/inbox/comments/c0ffee');
    expect(r.status).toBe(200);
    expect(r.json.comment).toMatchObject({ id: 'c0ffee', messages: [expect.objectContaining({ subject: { text: 'Stored' } })] });
  });

  it('delete takes several ids; unknown ids are ignored', async () => {
    await api.post(SYNC, { documents: [mail({ commentId: 'd1' }), mail({ commentId: 'd2' })], transform_tag: TAG });
    const r = await api.del('/api/v1/sources/acme/inbox/comments?id=d1&id=d2&id=ffff');
    expect(r.json).toEqual({ status: 'ok' });
    expect((await api.get('/api/v1/sources/acme/inbox/comments/d1')).status).toBe(404);
    expect((await api.get('/api/v1/sources/acme/inbox/comments/d2')).status).toBe(404);
  });

  it('delete without an id is 400', async () => {
    expect((await api.del('/api/v1/sources/acme/inbox/comments')).status).toBe(400);
  });
});

describe('threads', () => {
  it('lists the uids of a thread in timestamp order with thread properties', async () => {
    const root = mail({
      messageId: '<root@example.com>',
      from: 'alice@example.com',
      to: 'bob@example.com',
      date: 'Mon, 04 Mar 2024 10:00:00 +0000',
    });
    const reply = mail({
      messageId: '<reply@example.com>',
      from: 'bob@example.com',
      to: 'alice@example.com',
      subject: 'Re: Hello',
      date: 'Mon, 04 Mar 2024 11:00:00 +0000',
      inReplyTo: '<root@example.com>',
      references: '<root@example.com>',
    });
    const synced = await api.post(SYNC, { documents: [reply, root], transform_tag: TAG, include_comments: true });
    const [replyComment, rootComment] = synced.json.comments;
    expect(replyComment.thread_id).toBeDefined();
    expect(replyComment.thread_id).toBe(rootComment.thread_id);

    const r = await api.get(`/api/v1/sources/acme/inbox/threads?id=${rootComment.thread_id}&id=abcdef01`);
    expect(r.status).toBe(200);
    const [thread, unknown] = r.json.threads;
    expect(thread.thread_id).toBe(rootComment.thread_id);
    expect(thread.comments).toEqual([rootComment.uid, replyComment.uid]);
    expect(thread.thread_properties[rootComment.uid]).toMatchObject({ thread_position: 0, num_messages: 2 });
    expect(thread.thread_properties[replyComment.uid]).toMatchObject({ thread_position: 1, num_messages: 2, response_time: 3600 });
    expect(unknown).toEqual({ thread_id: 'abcdef01', comments: [], thread_properties: {} });

    const one = await api.get(`/api/v1/sources/acme/inbox/comments/${hex('<reply@example.com>')}`);
    expect(one.json.thread_properties).toMatchObject({ thread_position: 1, num_messages: 2 });
  });

  it('threads without an id is 400', async () => {
    expect((await api.get('/api/v1/sources/acme/inbox/threads')).status).toBe(400);
  });
});

describe('datasets', () => {
  it('create, get, list, model tags, 409 on a second create', async () => {
    const src = (await api.get('/api/v1/sources/acme/inbox')).json.source;
    const r = await api.put('/api/v1/datasets/acme/ds1', { dataset: { title: 'DS', source_ids: [src.id] } });
    expect(r.status).toBe(200);
    expect(r.json.dataset).toMatchObject({
      owner: 'acme',
      name: 'ds1',
      title: 'DS',
      source_ids: [src.id],
      has_sentiment: true,
      model_family: 'english',
    });
    expect((await api.get('/api/v1/datasets/acme/ds1')).json.dataset).toEqual(r.json.dataset);
    expect((await api.get('/api/v1/datasets/acme')).json.datasets.map((d: any) => d.name)).toContain('ds1');
    expect((await api.get('/api/v1/datasets')).json.datasets.length).toBeGreaterThan(0);
    expect((await api.get('/api/v1/datasets/acme/ds1/model-tags')).json.model_tags).toEqual([
      { name: 'live', version: 1 },
      { name: 'staging', version: 2 },
    ]);
    expect((await api.put('/api/v1/datasets/acme/ds1', { dataset: {} })).status).toBe(409);
  });

  it('unknown source ids are 400', async () => {
    expect((await api.put('/api/v1/datasets/acme/ds2', { dataset: { source_ids: ['0000000000000000'] } })).status).toBe(400);
  });

  it('has_sentiment cannot be changed by an update', async () => {
    await api.put('/api/v1/datasets/acme/ds3', { dataset: {} });
    expect((await api.post('/api/v1/datasets/acme/ds3', { dataset: { has_sentiment: false } })).status).toBe(400);
    expect((await api.del('/api/v1/datasets/acme/ds3')).json).toEqual({ status: 'ok' });
    expect((await api.get('/api/v1/datasets/acme/ds3')).status).toBe(404);
  });
});
