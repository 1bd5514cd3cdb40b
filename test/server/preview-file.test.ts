/**
 * POST /api/preview/file: a dropped file is read as `mailgate preview <file>` reads it. The drop
 * zone once sent every file as one message: an mbox became one comment with the next messages
 * glued into its body, a .msg failed with "no header field could be read", and a JSON sidecar
 * became a comment whose headers were JSON.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { MAX_FILE_MESSAGES } from '../../src/server/preview-routes.js';
import { app as makeApp, auth, SAMPLE } from './support.js';

let current: FastifyInstance | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

function server(...args: Parameters<typeof makeApp>): FastifyInstance {
  current = makeApp(...args).app;
  return current;
}

const sample = (path: string) => readFileSync(new URL(`../../samples/files/${path}`, import.meta.url));

async function drop(a: FastifyInstance, name: string, body: Buffer | string, query = '') {
  const res = await a.inject({
    method: 'POST',
    url: `/api/preview/file?name=${encodeURIComponent(name)}${query}`,
    payload: body,
    headers: { 'content-type': 'application/octet-stream', ...auth() },
  });
  return { status: res.statusCode, body: res.json() };
}

const subjects = (body: { messages: Array<{ comment?: { messages: Array<{ subject?: { text: string } }> } }> }) =>
  body.messages.map((m) => m.comment?.messages[0]?.subject?.text);

describe('POST /api/preview/file', () => {
  it('splits an mbox into its messages by the mboxrd rules, a prose "From " line staying in the body', async () => {
    const a = server();
    const { status, body } = await drop(a, 'mboxrd.mbox', sample('mbox/mboxrd.mbox'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ file: 'mboxrd.mbox', kind: 'mbox', more: false });
    expect(subjects(body)).toEqual(['Quarterly report', 'Re: Quarterly report', 'Lunch?']);
    expect(body.messages.map((m: { index: number }) => m.index)).toEqual([0, 1, 2]);
    expect(body.document).toBeUndefined();
    const second = body.messages[1].document.raw_email.body.plain as string;
    expect(second).toContain('From then on the numbers were fine');
    expect(second).not.toContain('Lunch on Friday');
    expect(body.messages[0].document.raw_email.body.plain).toContain('From the start of the quarter');
  });

  it('converts an Outlook .msg as the files reader does', async () => {
    const a = server();
    const { status, body } = await drop(a, 'properties.msg', sample('msg/properties.msg'));
    expect(status).toBe(200);
    expect(body.kind).toBe('msg');
    expect(subjects(body)).toEqual(['Réunion budget 2024']);
    expect(body.messages[0].comment.messages[0].from).toContain('kim@example.com');
    expect(body.messages[0].document.raw_email.body.plain).toContain('the budget meeting moves to Thursday');
  });

  it('reads a plain message whatever its name, and refuses what is not mail with the CLI words', async () => {
    const a = server();
    expect(subjects((await drop(a, 'message.txt', SAMPLE)).body)).toEqual(['Invoice 1234 is wrong']);

    const json = await drop(a, '00001.7c53336b37003a9286aba55d2945844c.json', '{"id": 1, "label": "ham"}');
    expect(json.status).toBe(200);
    expect(json.body.kind).toBeNull();
    expect(json.body.messages).toEqual([
      {
        index: 0,
        error: {
          code: 'MAILGATE_ERR_INPUT_UNSUPPORTED',
          message: expect.stringMatching(/^00001\.7c53336b37003a9286aba55d2945844c\.json is not mail \(JSON\)/),
        },
      },
    ]);
    const png = await drop(a, 'logo.png', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
    expect(png.body.messages[0].error.message).toContain('is not mail (image)');

    const damaged = await drop(a, 'note.eml', 'just some words\nand more\n');
    expect(damaged.body.messages[0].error.code).toBe('MAILGATE_ERR_MIME_NOT_EMAIL');
    expect(damaged.body.messages[0].error.message).toBe('note.eml is not readable as mail: it is named .eml but has no mail header block');

    const broken = await drop(a, 'broken.msg', Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(600)]));
    expect(broken.body.kind).toBe('msg');
    expect(broken.body.messages[0].error.code).toBe('MAILGATE_ERR_INPUT_MSG_INVALID');
  });

  it('previews at most MAX_FILE_MESSAGES messages of one file and says there were more', async () => {
    const a = server({ preview: { max_body_bytes: 1024 * 1024 } });
    const one = (i: number) => `From x@example.com Mon Mar  4 09:00:00 2024\nFrom: x@example.com\nSubject: n${i}\n\nbody ${i}\n\n`;
    const mbox = Array.from({ length: MAX_FILE_MESSAGES + 5 }, (_, i) => one(i)).join('');
    const { status, body } = await drop(a, 'big.mbox', mbox);
    expect(status).toBe(200);
    expect(body.messages).toHaveLength(MAX_FILE_MESSAGES);
    expect(body.more).toBe(true);
    expect(subjects(body).at(-1)).toBe(`n${MAX_FILE_MESSAGES - 1}`);
  });

  it('keeps the preview budget: body limit, an unknown route, a name required, the key', async () => {
    const a = server({ preview: { max_body_bytes: 1024 } });
    expect((await drop(a, 'big.eml', SAMPLE + 'x'.repeat(2048))).status).toBe(413);
    const route = await drop(a, 'a.eml', SAMPLE, '&route=nosuch');
    expect(route.status).toBe(400);
    expect(route.body.error.message).toBe('Unknown route "nosuch".');
    const noName = await a.inject({
      method: 'POST',
      url: '/api/preview/file',
      payload: SAMPLE,
      headers: { 'content-type': 'application/octet-stream', ...auth() },
    });
    expect(noName.statusCode).toBe(400);
    const noKey = await a.inject({
      method: 'POST',
      url: '/api/preview/file?name=a.eml',
      payload: SAMPLE,
      headers: { 'content-type': 'message/rfc822' },
    });
    expect(noKey.statusCode).toBe(401);
  });
});
