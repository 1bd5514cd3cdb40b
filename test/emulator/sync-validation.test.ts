import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawEmailDocument } from '../../src/model/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { client, mail, setup, SYNC, TAG, type Client } from './helpers.js';

let emu: StartedEmulator;
let api: Client;

beforeAll(async () => {
  emu = await startEmulator();
  api = client(emu.url, emu.token);
  await setup(api);
});
afterAll(() => emu.stop());

/** Sends one document altered by `change`. */
async function syncOne(change: (d: RawEmailDocument & Record<string, any>) => void, extra: Record<string, unknown> = {}) {
  const doc = mail() as RawEmailDocument & Record<string, any>;
  change(doc);
  return api.post(SYNC, { documents: [doc], transform_tag: TAG, ...extra });
}

async function expectRejected(status: number, res: Promise<{ status: number; json: any }>, message?: RegExp): Promise<void> {
  const r = await res;
  expect(r.status).toBe(status);
  expect(r.json.status).toBe('error');
  if (message) expect(r.json.message).toMatch(message);
  expect(emu.emulator.stats().comments).toBe(0);
}

describe('sync-raw-emails request shape (400)', () => {
  it('body must be an object', () => expectRejected(400, api.post(SYNC, [mail()])));
  it('documents is required', () => expectRejected(400, api.post(SYNC, { transform_tag: TAG }), /documents/));
  it('an empty documents list is accepted with zero counts (the official CLI may send an empty last batch)', async () => {
    const r = await api.post(SYNC, { documents: [], transform_tag: TAG });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'ok', new: 0, updated: 0, updated_properties_only: 0, updated_text_changed: 0, unchanged: 0 });
    expect(emu.emulator.stats()).toMatchObject({ comments: 0, ai_units: 0 });
  });
  it('an empty documents list still has its envelope checked', () =>
    expectRejected(422, api.post(SYNC, { documents: [], transform_tag: 'nope.0.AAAAAAAA' }), /is not a valid transform tag/));
  it('unknown top-level fields are refused', () =>
    expectRejected(400, api.post(SYNC, { documents: [mail()], transform_tag: TAG, extra: 1 })));
  it('include_comments must be a boolean', () =>
    expectRejected(
      400,
      syncOne(() => {}, { include_comments: 'yes' }),
    ));
  it('a document must be an object with raw_email', () =>
    expectRejected(400, api.post(SYNC, { documents: [{}], transform_tag: TAG }), /documents\[0\]/));
  it('names the offending document', () =>
    expectRejected(400, api.post(SYNC, { documents: [mail(), mail(), { raw_email: {} }], transform_tag: TAG }), /^documents\[2\]/));
});

describe('sync-raw-emails document count', () => {
  it('more than 16384 documents is a 400', async () => {
    const docs = Array.from({ length: 16_385 }, () => ({ raw_email: { headers: { raw: 'Message-ID: <x@y>' }, body: { plain: 'x' } } }));
    await expectRejected(400, api.post(SYNC, { documents: docs, transform_tag: TAG }), /16384/);
  });

  it('more than 4096 documents are accepted by default (the spec allows 16384)', async () => {
    const docs = Array.from({ length: 4097 }, (_, i) => ({
      raw_email: { headers: { raw: `Message-ID: <big${i}@y>` }, body: { plain: 'x' } },
    }));
    const r = await api.post(SYNC, { documents: docs, transform_tag: TAG });
    expect(r.status).toBe(200);
    expect(r.json.new).toBe(4097);
    emu.emulator.reset();
    await setup(api);
  });

  it('maxSyncDocuments: 4096 emulates the smaller documented limit', async () => {
    const small = await startEmulator({ maxSyncDocuments: 2 });
    try {
      const c = client(small.url, small.token);
      await setup(c);
      const over = await c.post(SYNC, { documents: [mail(), mail(), mail()], transform_tag: TAG });
      expect(over.status).toBe(400);
      expect((await c.post(SYNC, { documents: [mail(), mail()], transform_tag: TAG })).status).toBe(200);
    } finally {
      await small.stop();
    }
  });
});

describe('raw_email.headers (400)', () => {
  it('needs raw or parsed', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.headers = {} as never;
      }),
      /exactly one of raw and parsed/,
    ));
  it('refuses raw and a non-empty parsed together', () =>
    expectRejected(
      400,
      syncOne((d) => {
        (d.raw_email.headers as any).parsed = { Subject: 'x' };
      }),
      /exactly one of raw and parsed/,
    ));
  it('accepts raw with an empty parsed (as the generated client sends it)', async () => {
    const doc = mail({ commentId: 'aa01' });
    (doc.raw_email.headers as any).parsed = {};
    const r = await api.post(SYNC, { documents: [doc], transform_tag: TAG });
    expect(r.status).toBe(200);
    await api.del('/api/v1/sources/acme/inbox/comments?id=aa01');
  });
  it('raw is at most 65536 characters', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.headers = { raw: `Message-ID: <a@b>\r\nX-Pad: ${'x'.repeat(65_536)}` };
      }),
    ));
  it('parsed keys must be ASCII header names', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.headers = { parsed: { 'Message-ID': '<a@b>', Sübject: 'x' } };
      }),
    ));
  it('parsed values are strings or string lists', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.headers = { parsed: { 'Message-ID': '<a@b>', Subject: 5 } } as never;
      }),
    ));
});

describe('raw_email.body (400)', () => {
  it('needs plain or html', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.body = {} as never;
      }),
      /exactly one of plain and html/,
    ));
  it('refuses plain and html together', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.body = { plain: 'a', html: '<p>a</p>' } as never;
      }),
      /exactly one of plain and html/,
    ));
  it('plain is at most 65536 characters', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.body = { plain: 'x'.repeat(65_537) };
      }),
    ));
  it('plain of exactly 65536 characters is accepted', async () => {
    const doc = mail({ commentId: 'aa02', body: 'y'.repeat(65_536) });
    expect((await api.post(SYNC, { documents: [doc], transform_tag: TAG })).status).toBe(200);
    await api.del('/api/v1/sources/acme/inbox/comments?id=aa02');
  });
  it('html is at most 32 MiB of characters', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.body = { html: 'x'.repeat(33_554_433) };
      }),
    ));
});

describe('raw_email.attachments (400)', () => {
  const att = { name: 'a.pdf', size: 10, content_type: 'application/pdf' };
  it('at most 128 attachments', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.attachments = Array.from({ length: 129 }, () => att);
      }),
    ));
  it('each needs name, size and content_type', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.attachments = [{ name: 'a', content_type: 'x' } as never];
      }),
    ));
  it('size is a non-negative integer', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.attachments = [{ ...att, size: -1 }];
      }),
    ));
  it('name is at most 256 characters', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.attachments = [{ ...att, name: 'n'.repeat(257) }];
      }),
    ));
  it('content_type is at most 256 characters', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.raw_email.attachments = [{ ...att, content_type: 't'.repeat(257) }];
      }),
    ));
});

describe('comment_id (400)', () => {
  it('must be hexadecimal', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.comment_id = 'not-hex';
      }),
    ));
  it('must be lowercase', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.comment_id = 'ABCDEF';
      }),
    ));
  it('must not be empty', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.comment_id = '';
      }),
    ));
  it('is at most 1024 characters', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.comment_id = 'a'.repeat(1025);
      }),
    ));
});

describe('user_properties (400)', () => {
  it('keys need a string: or number: prefix', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.user_properties = { Mailbox: 'x' };
      }),
    ));
  it('names are at most 32 characters', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.user_properties = { [`string:${'n'.repeat(33)}`]: 'x' };
      }),
    ));
  it('names start and end with a letter, digit or underscore', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.user_properties = { 'string: Mailbox': 'x' };
      }),
    ));
  it('names hold no punctuation', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.user_properties = { 'string:Mail-box': 'x' };
      }),
    ));
  it('string: values are strings', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.user_properties = { 'string:Mailbox': 5 };
      }),
    ));
  it('number: values are numbers', () =>
    expectRejected(
      400,
      syncOne((d) => {
        d.user_properties = { 'number:Score': '5' };
      }),
    ));
  it('override_user_properties holds at most 128 names', () =>
    expectRejected(
      400,
      syncOne(() => {}, { override_user_properties: Array.from({ length: 129 }, (_, i) => `P${i}`) }),
    ));
  it('override_user_properties entries are property names without prefix', () =>
    expectRejected(
      400,
      syncOne(() => {}, { override_user_properties: ['string:Sender'] }),
    ));
});

describe('transform_tag (422)', () => {
  it('an unknown tag is 422 with the service message', () =>
    expectRejected(
      422,
      api.post(SYNC, { documents: [mail()], transform_tag: 'not-a-valid-transform-tag.0.ABCDEFGH' }),
      /^The value 'not-a-valid-transform-tag\.0\.ABCDEFGH' is not a valid transform tag\.$/,
    ));
  it('a missing tag is 422', () => expectRejected(422, api.post(SYNC, { documents: [mail()] }), /transform tag is required/));
  it('a tag that is not a string is 400', () => expectRejected(400, api.post(SYNC, { documents: [mail()], transform_tag: 7 })));

  it('requireTransformTag: false accepts a missing tag', async () => {
    const lax = await startEmulator({ requireTransformTag: false });
    try {
      const c = client(lax.url, lax.token);
      await setup(c);
      expect((await c.post(SYNC, { documents: [mail()] })).status).toBe(200);
    } finally {
      await lax.stop();
    }
  });

  it('transformTags: the allow-list is configurable, and * admits any well-shaped tag', async () => {
    const custom = await startEmulator({ transformTags: ['acme.1.ABCDEFGH', '*'] });
    try {
      const c = client(custom.url, custom.token);
      await setup(c);
      expect((await c.post(SYNC, { documents: [mail()], transform_tag: 'acme.1.ABCDEFGH' })).status).toBe(200);
      expect((await c.post(SYNC, { documents: [mail()], transform_tag: 'other.3.ZZZZ0000' })).status).toBe(200);
      expect((await c.post(SYNC, { documents: [mail()], transform_tag: 'garbage' })).status).toBe(422);
    } finally {
      await custom.stop();
    }
  });
});

describe('comment id derivation (422)', () => {
  it('no comment_id and no Message-ID is 422 for the whole request', () =>
    expectRejected(
      422,
      api.post(SYNC, { documents: [mail(), mail({ messageId: null })], transform_tag: TAG }),
      /^documents\[1\]: no comment_id and no Message-ID/,
    ));
  it('a blank Message-ID counts as none', () =>
    expectRejected(
      422,
      syncOne((d) => {
        d.raw_email.headers = { raw: 'Subject: x\r\nMessage-ID:   ' };
      }),
    ));
});

describe('no_charge', () => {
  it('no_charge=false is the normal case', async () => {
    const r = await api.post(`${SYNC}?no_charge=false`, { documents: [mail({ commentId: 'aa03' })], transform_tag: TAG });
    expect(r.status).toBe(200);
    await api.del('/api/v1/sources/acme/inbox/comments?id=aa03');
  });
  it('no_charge=true is 403 for an ordinary caller', () =>
    expectRejected(403, api.post(`${SYNC}?no_charge=true`, { documents: [mail()], transform_tag: TAG })));
  it('no_charge must be true or false', () =>
    expectRejected(400, api.post(`${SYNC}?no_charge=maybe`, { documents: [mail()], transform_tag: TAG })));
  it('allowNoCharge: stores without billing', async () => {
    const free = await startEmulator({ allowNoCharge: true });
    try {
      const c = client(free.url, free.token);
      await setup(c);
      const r = await c.post(`${SYNC}?no_charge=true`, { documents: [mail()], transform_tag: TAG });
      expect(r.json.new).toBe(1);
      expect(free.emulator.stats()).toMatchObject({ ai_units: 0, comments: 1 });
    } finally {
      await free.stop();
    }
  });
});

describe('options for the points where spec and notes differ', () => {
  let other: StartedEmulator;
  let otherApi: Client;
  beforeAll(async () => {
    other = await startEmulator({ allowEmptyDocuments: false, bodies: 'at-least-one' });
    otherApi = client(other.url, other.token);
    await setup(otherApi);
  });
  afterAll(() => other.stop());

  it('allowEmptyDocuments: false refuses an empty list (400)', async () => {
    const r = await otherApi.post(SYNC, { documents: [], transform_tag: TAG });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/at least one/);
  });

  it("bodies: 'at-least-one' accepts plain and html together and uses plain; neither is still 400", async () => {
    const doc = mail({ body: 'the plain text' });
    const both = { ...doc, raw_email: { ...doc.raw_email, body: { plain: 'the plain text', html: '<p>the html</p>' } } };
    const r = await otherApi.post(SYNC, { documents: [both], transform_tag: TAG, include_comments: true });
    expect(r.status).toBe(200);
    expect(r.json.comments[0].messages[0].body.text).toContain('the plain text');
    const none = await otherApi.post(SYNC, { documents: [{ ...doc, raw_email: { ...doc.raw_email, body: {} } }], transform_tag: TAG });
    expect(none.status).toBe(400);
    expect(none.json.message).toMatch(/at least one of plain and html/);
  });
});
