import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { previewScriptFile } from '../../src/server/page/assets.js';
import { app as makeApp, auth, HOSTILE, REPLY, SAMPLE } from './support.js';

let current: FastifyInstance | undefined;
function app(...args: Parameters<typeof makeApp>) {
  const built = makeApp(...args);
  current = built.app;
  return built;
}
afterEach(async () => {
  await current?.close();
  current = undefined;
});

const post = (
  a: FastifyInstance,
  body: string | Buffer,
  headers: Record<string, string> = { 'content-type': 'message/rfc822', ...auth() },
  url = '/api/preview',
) => a.inject({ method: 'POST', url, payload: body, headers });

describe('POST /api/preview', () => {
  it('returns the document, the comment, thread properties and warnings without storing anything', async () => {
    const { app: a, f } = app();
    const res = await post(a, SAMPLE);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['comment', 'document', 'thread_properties', 'warnings']);
    expect(body.document.comment_id).toBe(Buffer.from('<invoice-1234@example.com>').toString('hex'));
    expect(body.document.raw_email.body.plain).toContain('the amount on invoice 1234');
    expect(body.document.raw_email.headers.raw).toContain('Subject: Invoice 1234 is wrong');
    const msg = body.comment.messages[0];
    expect(msg).toMatchObject({
      from: expect.stringContaining('ann@example.com'),
      subject: { text: 'Invoice 1234 is wrong' },
      sent_at: '2026-03-03T10:15:00.000Z',
    });
    expect(msg.body.text).toContain('twice what we agreed');
    expect(msg.body.text).not.toContain('Please find attached');
    expect(body.comment.user_properties['string:Sender']).toContain('ann@example.com');
    expect(body.thread_properties).toMatchObject({ thread_position: 0, num_messages: 1 });
    expect(body.warnings).toEqual([]);
    expect(f.dead.size).toBe(5);
    // Nothing was received: a preview is not intake.
    expect((await f.metrics.registry.getSingleMetric('mailgate_messages_received_total')?.get())?.values).toEqual([]);
  });

  it('accepts application/octet-stream too, and keeps HTML as inert JSON text', async () => {
    const { app: a } = app();
    const res = await post(a, Buffer.from(HOSTILE), { 'content-type': 'application/octet-stream', ...auth() });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json().comment.messages[0].subject.text).toBe('<script>window.__pwned=1</script> urgent');
  });

  it('refuses other content types, oversize bodies and non-messages with coded errors', async () => {
    const { app: a } = app({ preview: { max_body_bytes: 1024 } });
    let res = await post(a, SAMPLE, { 'content-type': 'text/plain', ...auth() });
    expect(res.statusCode).toBe(415);
    expect(res.json().error.code).toBe('MAILGATE_ERR_SERVER_UNSUPPORTED_MEDIA_TYPE');
    res = await post(a, JSON.stringify({ raw: SAMPLE }), { 'content-type': 'application/json', ...auth() });
    expect(res.statusCode).toBe(415);
    res = await post(a, SAMPLE + 'x'.repeat(2048));
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('MAILGATE_ERR_SERVER_BODY_TOO_LARGE');
    res = await post(a, '');
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toMatch(/^MAILGATE_ERR_MIME_/);
  });

  it('passes the route through and rejects an unknown one', async () => {
    const { app: a } = app();
    const res = await post(a, SAMPLE, { 'content-type': 'message/rfc822', ...auth() }, '/api/preview?route=nosuch');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({ code: 'MAILGATE_ERR_SERVER_BAD_REQUEST', message: 'Unknown route "nosuch".' });
  });

  it('is open without a key only with public_preview, and stored items stay behind the key', async () => {
    const { app: a } = app({ public_preview: true, api_keys: [] });
    expect((await post(a, SAMPLE, { 'content-type': 'message/rfc822' })).statusCode).toBe(200);
    expect((await a.inject('/api/preview/7')).statusCode).toBe(403);
    expect((await a.inject('/api/status')).statusCode).toBe(403);
  });
});

describe('POST /api/preview/threads', () => {
  it('computes thread properties within the given comments, in order', async () => {
    const { app: a } = app();
    const first = (await post(a, SAMPLE)).json().comment;
    const reply = (await post(a, REPLY)).json().comment;
    expect(reply.thread_id).toBe(first.thread_id);
    const res = await post(
      a,
      JSON.stringify({ comments: [reply, first] }),
      { 'content-type': 'application/json', ...auth() },
      '/api/preview/threads',
    );
    expect(res.statusCode).toBe(200);
    const [rt, ft] = res.json().threads;
    expect(rt.comment.user_properties['number:Position in Thread']).toBe(1);
    expect(ft.comment.user_properties['number:Position in Thread']).toBe(0);
    const [r, f] = [rt.thread_properties, ft.thread_properties];
    expect(f).toMatchObject({
      thread_position: 0,
      num_messages: 2,
      num_participants: 2,
      first_sender: expect.stringContaining('ann@example.com'),
    });
    expect(r).toMatchObject({ thread_position: 1, num_messages: 2, response_time: 5400 });
  });

  it('rejects anything but a list of comments', async () => {
    const { app: a } = app();
    for (const body of ['{}', '{"comments":[]}', '{"comments":[{"id":"zz"}]}', '[1]']) {
      const res = await post(a, body, { 'content-type': 'application/json', ...auth() }, '/api/preview/threads');
      expect(res.statusCode, body).toBe(400);
      expect(res.json().error.code).toBe('MAILGATE_ERR_SERVER_BAD_REQUEST');
    }
  });
});

describe('GET /preview', () => {
  it('is one page with its own script only, served without a key, under a strict CSP, telling the page the auth mode', async () => {
    const modes: Array<[Parameters<typeof makeApp>[0], string]> = [
      [{}, 'key'],
      [{ api_keys: [] }, 'disabled'],
      [{ public_preview: true }, 'open'],
    ];
    for (const [options, mode] of modes) {
      const { app: a } = app(options);
      const res = await a.inject('/preview');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain(`<html lang="en" data-auth="${mode}">`);
      const csp = String(res.headers['content-security-policy']);
      const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1];
      expect(nonce).toBeDefined();
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("connect-src 'self'");
      expect(res.body.match(/<script[^>]*>/g)).toEqual(['<script type="module" src="preview/app.js">']);
      expect(res.body).toContain('<script type="module" src="preview/app.js"></script>');
      expect(res.body.match(/<style[^>]*>/g)).toEqual([`<style nonce="${nonce}">`]);
      expect(res.body.match(/\s(src|href)=/g)).toEqual([' src=']);
      expect(res.body).not.toContain('innerHTML');
      await a.close();
    }
    current = undefined;
  });

  it('serves its script, compiled from TypeScript, as a module that revalidates', async () => {
    const { app: a } = app({ api_keys: [] });
    const res = await a.inject('/preview/app.js');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toBe(readFileSync(previewScriptFile(), 'utf8').replace(/\/\/# sourceMappingURL=\S+\s*$/, ''));
    expect(res.body).toContain("document.documentElement.getAttribute('data-auth')");
    expect(res.body).not.toMatch(/^\s*import\b/m);
    // Message content reaches the DOM as text only.
    expect(res.body).not.toMatch(/\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write/);
    expect(res.body).not.toContain('sourceMappingURL');
    const etag = String(res.headers.etag);
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await a.inject({ url: '/preview/app.js', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('takes a Content-Type with parameters', async () => {
    const { app: a } = app();
    const res = await post(a, SAMPLE, { 'content-type': 'message/rfc822; charset=utf-8', ...auth() });
    expect(res.statusCode).toBe(200);
  });
});
