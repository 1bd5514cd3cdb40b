/**
 * The console API in a running service on SQLite, through HTTP: the item list (filters, search,
 * cursor), one item in full, raw downloads, the overview, bulk replay, and the event stream —
 * which ends when the service stops, without holding up its shutdown.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import type { ItemDetail, ItemsPage, Overview, BulkReplayResult } from '../../src/server/console-types.js';
import { startEmulator } from '../support/emulator.js';
import { eventually, ROOT } from '../service/serve-process.js';
import { drained } from '../support/drained.js';

/** The compiled service: its parse pool needs the compiled worker (`npm test` builds first). */
const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
const ADMIN_KEY = 'admin-key-0123456789abcdef';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const QUESTION = [
  'From: Ann Example <ann@example.com>',
  'To: support@example.com',
  'Subject: Invoice 1234 is wrong',
  'Message-ID: <invoice-1234@example.com>',
  'Date: Tue, 03 Mar 2026 10:15:00 +0000',
  '',
  'The amount is twice what we agreed.',
  '',
].join('\r\n');

const REPLY = [
  'From: Support <support@example.com>',
  'To: Ann Example <ann@example.com>',
  'Subject: Re: Invoice 1234 is wrong',
  'Message-ID: <reply-1@example.com>',
  'In-Reply-To: <invoice-1234@example.com>',
  'References: <invoice-1234@example.com>',
  'Date: Tue, 03 Mar 2026 11:45:00 +0000',
  '',
  'Hi Ann, we corrected it.',
  '',
  '-- ',
  'Support team',
  '',
  'On Tue, 3 Mar 2026 at 10:15, Ann Example <ann@example.com> wrote:',
  '> The amount is twice what we agreed.',
  '',
].join('\r\n');

const WITH_ATTACHMENT = [
  'From: Bob <bob@example.net>',
  'To: support@example.com',
  'Subject: Contract attached',
  'Message-ID: <contract-7@example.net>',
  'Date: Wed, 04 Mar 2026 09:00:00 +0000',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Please sign the contract.',
  '--b1',
  'Content-Type: application/pdf; name="contract.pdf"',
  'Content-Disposition: attachment; filename="contract.pdf"',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('%PDF-1.4 not really a pdf').toString('base64'),
  '--b1--',
  '',
].join('\r\n');

function serviceConfig(dir: string, emu: { url: string; token: string }) {
  return loadConfig({
    overrides: {
      store: `sqlite:${join(dir, 'mailgate.db')}`,
      api: { url: emu.url, token: emu.token },
      server: { listen: '127.0.0.1:0', api_keys: [ADMIN_KEY] },
      delivery: { flush_ms: 0 },
      routes: [
        { name: 'support', source: 'acme/support' },
        // Its source does not exist: the route pauses and its items stay queued, raw bytes kept.
        { name: 'held', source: 'acme/missing' },
      ],
      adapters: {
        files: [
          { name: 'inbox', route: 'support', paths: [join(dir, 'mail')] },
          { name: 'held-inbox', route: 'held', paths: [join(dir, 'held')] },
        ],
      },
    } as never,
  });
}

async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, seen: { text: string }, pattern: RegExp): Promise<void> {
  const decoder = new TextDecoder();
  while (!pattern.test(seen.text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before ${String(pattern)}; got ${seen.text}`);
    seen.text += decoder.decode(value, { stream: true });
  }
}

describe('mailgate serve: the console API', () => {
  it('lists, searches, shows, downloads, summarizes, replays and streams items', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailgate-console-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'mail'));
    mkdirSync(join(dir, 'held'));
    writeFileSync(join(dir, 'mail', '1.eml'), QUESTION);
    writeFileSync(join(dir, 'mail', '2.eml'), REPLY);
    writeFileSync(join(dir, 'mail', '3.eml'), 'this is not an email\n');
    writeFileSync(join(dir, 'held', '4.eml'), WITH_ATTACHMENT);
    const emu = await startEmulator({ autoCreateSources: false });
    await createApiClient({ baseUrl: emu.url, token: emu.token }).ensureSource('acme/support');
    const { startService } = (await import(SERVICE)) as typeof import('../../src/service/index.js');
    const service = await startService(drained(serviceConfig(dir, emu)), { logger: createLogger(false) });
    let stopped = false;
    try {
      const store = service.runtime.store;
      await eventually(async () => (await store.counters('support'))[0]?.delivered === 2, 'both messages delivered');
      await eventually(async () => (await store.listItems({ limit: 1, state: 'retrying' })).length === 1, 'the held message retrying');
      const get = (path: string, key: string | null = ADMIN_KEY, init: RequestInit = {}) =>
        fetch(`${service.url}${path}`, { ...init, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...init.headers } });
      const json = async <T>(path: string): Promise<T> => {
        const res = await get(path);
        expect(res.status, path).toBe(200);
        return (await res.json()) as T;
      };

      // --- the list -----------------------------------------------------------------------
      expect((await get('/api/items', null)).status).toBe(401);
      const all = await json<ItemsPage>('/api/items');
      expect(all.next).toBeNull();
      expect(all.items).toHaveLength(4);
      expect(all.items.map((i) => i.id)).toEqual([...all.items.map((i) => i.id)].sort((a, b) => b - a));
      const byFile = new Map(all.items.map((i) => [`${String(i.origin.details['path']).split('/').pop()}`, i]));
      const question = byFile.get('1.eml')!;
      const reply = byFile.get('2.eml')!;
      const broken = byFile.get('3.eml')!;
      const held = byFile.get('4.eml')!;
      expect(question).toMatchObject({
        state: 'delivered',
        route: 'support',
        sender: 'ann@example.com',
        sender_name: 'Ann Example',
        subject: 'Invoice 1234 is wrong',
        message_id: 'invoice-1234@example.com',
        timestamp: '2026-03-03T10:15:00.000Z',
        origin: { kind: 'files', name: null },
        attempts: 0,
        next_attempt_at: null,
        last_error_code: null,
      });
      expect(question.origin.label).toContain('1.eml');
      expect(broken).toMatchObject({ state: 'dead', last_error_code: 'MAILGATE_ERR_MIME_NOT_EMAIL', sender: null });
      expect(held).toMatchObject({ state: 'retrying', route: 'held', origin: { kind: 'files', details: { index: 0 } }, attempts: 1 });
      expect(held.last_error_code).toMatch(/^MAILGATE_ERR_API_/);
      expect(Date.parse(held.next_attempt_at!)).toBeGreaterThan(Date.parse(held.received_at));

      const first = await json<ItemsPage>('/api/items?limit=3');
      expect(first.items).toHaveLength(3);
      expect(first.next).toBe(String(first.items[2]!.id));
      const rest = await json<ItemsPage>(`/api/items?limit=3&before=${first.next}`);
      expect([...first.items, ...rest.items].map((i) => i.id)).toEqual(all.items.map((i) => i.id));
      expect(rest.next).toBeNull();

      const ids = async (query: string) => (await json<ItemsPage>(`/api/items?${query}`)).items.map((i) => i.id);
      expect(await ids('state=dead')).toEqual([broken.id]);
      expect(await ids('state=delivered&route=support')).toEqual([reply.id, question.id].sort((a, b) => b - a));
      expect(await ids('route=held')).toEqual([held.id]);
      expect(await ids('adapter=files')).toHaveLength(4);
      expect(await ids('adapter=imap')).toEqual([]);
      expect(await ids('adapter=files&adapter_name=held-inbox')).toEqual([]);
      expect(await ids('q=ANN%40')).toEqual([question.id]);
      expect(await ids('q=re%3A%20invoice')).toEqual([reply.id]);
      expect(await ids('q=%3Ccontract-7%40example.net%3E')).toEqual([held.id]);
      expect(await ids(`q=${question.comment_id.slice(0, 12)}`)).toContain(question.id);
      expect(await ids('since=2999-01-01T00:00:00Z')).toEqual([]);
      for (const bad of ['state=lost', 'limit=0', 'limit=501', 'before=x', 'rout=support', 'adapter_name=inbox', 'since=yesterday']) {
        const res = await get(`/api/items?${bad}`);
        expect(res.status, bad).toBe(400);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('MAILGATE_ERR_SERVER_BAD_REQUEST');
      }

      // --- one item -------------------------------------------------------------------------
      const detail = await json<ItemDetail>(`/api/items/${reply.id}`);
      expect(detail.item).toEqual(reply);
      // The origin as stored, and its details as the files kind shows them.
      expect(detail.origin).toMatchObject({
        adapter: 'files',
        instance: '',
        details: { path: expect.stringMatching(/2\.eml$/), index: 0 },
      });
      expect(detail.origin_lines).toEqual([
        { label: 'File', value: expect.stringMatching(/2\.eml$/) },
        { label: 'Message in file', value: '#1' },
      ]);
      expect(detail.document).toMatchObject({ raw_email: { body: { plain: expect.stringContaining('we corrected it') } } });
      const comment = detail.comment!;
      const text = comment.body_text;
      const cut = (kind: string) =>
        comment.spans
          .filter((s) => s.kind === kind)
          .map((s) => text.slice(s.start, s.end))
          .join('');
      expect(cut('text')).toContain('we corrected it');
      expect(cut('signature')).toContain('Support team');
      expect(cut('quote')).toContain('> The amount is twice');
      expect(comment.generated_properties).toEqual(expect.arrayContaining(['Sender', 'Thread', 'Message ID']));
      expect(comment.thread_properties).toMatchObject({ num_messages: 2, thread_position: 1 });
      expect(detail.thread.map((m) => [m.item_id, m.self])).toEqual([
        [question.id, false],
        [reply.id, true],
      ]);
      // The thread as a conversation: each stored message's subject and what it says, quote and signature removed.
      expect(detail.thread[0]).toMatchObject({ subject: expect.stringContaining('Invoice 1234'), text: expect.any(String) });
      expect(detail.thread[1]!.text).toContain('we corrected it');
      expect(detail.thread[1]!.text).not.toContain('Support team');
      expect(detail.raw).toMatchObject({ kept: false, reason: 'dropped_after_delivery', parts: null });
      expect(detail.raw.headers).toContainEqual({ name: 'In-Reply-To', value: '<invoice-1234@example.com>' });
      expect(detail.attempts).toEqual([{ at: expect.any(String), outcome: 'delivered', code: null, message: null, delay_ms: null }]);
      expect(detail.predictions).toBeNull();

      const heldDetail = await json<ItemDetail>(`/api/items/${held.id}`);
      expect(heldDetail.raw).toMatchObject({ kept: true, bytes: Buffer.byteLength(WITH_ATTACHMENT) });
      expect(heldDetail.attempts).toEqual([
        { at: expect.any(String), outcome: 'retry', code: held.last_error_code, message: expect.any(String), delay_ms: expect.any(Number) },
      ]);
      expect(heldDetail.error?.code).toBe(held.last_error_code);
      expect(heldDetail.raw.parts).toMatchObject({
        content_type: 'multipart/mixed',
        part: '',
        children: [
          { content_type: 'text/plain', part: '1', charset: 'utf-8' },
          { content_type: 'application/pdf', part: '2', filename: 'contract.pdf', disposition: 'attachment', transfer_encoding: 'base64' },
        ],
      });
      expect(heldDetail.raw.attachments).toEqual([{ name: 'contract.pdf', content_type: 'application/pdf', size: 25 }]);
      expect(JSON.stringify(heldDetail)).not.toContain(Buffer.from('%PDF-1.4 not really a pdf').toString('base64'));
      expect((await get('/api/items/999999')).status).toBe(404);
      expect((await get('/api/items/abc')).status).toBe(400);

      // --- raw bytes ------------------------------------------------------------------------
      const raw = await get(`/api/items/${held.id}/raw`);
      expect(raw.status).toBe(200);
      expect(raw.headers.get('content-type')).toBe('message/rfc822');
      expect(raw.headers.get('content-disposition')).toBe(`attachment; filename="item-${held.id}.eml"`);
      expect(await raw.text()).toBe(WITH_ATTACHMENT);
      const gone = await get(`/api/items/${question.id}/raw`);
      expect(gone.status).toBe(410);
      expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('MAILGATE_ERR_SERVER_GONE');
      expect((await get('/api/items/999999/raw')).status).toBe(404);

      // --- overview ---------------------------------------------------------------------------
      const overview = await json<Overview>('/api/overview');
      const support = overview.routes.find((r) => r.route === 'support')!;
      expect(support).toMatchObject({
        mode: 'sync',
        target: 'acme/support',
        counts: { delivered: 2, dead: 1, queued: 0, retrying: 0, unchanged: 0 },
        outbox_depth: 0,
        delivered_last_hour: 2,
      });
      expect(support.ai_units_per_day).toHaveLength(14);
      const units = support.ai_units_per_day.reduce((n, d) => n + d.units, 0);
      expect(units).toBe((await store.counters('support'))[0]!.aiUnits);
      expect(overview.routes.find((r) => r.route === 'held')).toMatchObject({ outbox_depth: 1, counts: { retrying: 1 } });
      expect(overview.lines).toContainEqual({
        route: 'support',
        adapter: 'files',
        counts: { delivered: 2, dead: 1, queued: 0, retrying: 0, unchanged: 0 },
      });
      expect(overview.adapters.map((a) => [a.kind, a.name])).toEqual([
        ['files', 'inbox'],
        ['files', 'held-inbox'],
      ]);
      expect(overview.owners).toHaveLength(1);

      // --- live events and bulk replay ---------------------------------------------------------
      expect((await get('/api/events', null)).status).toBe(401);
      const events = await get('/api/events');
      expect(events.status).toBe(200);
      expect(events.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const reader = events.body!.getReader();
      const seen = { text: '' };
      await readUntil(reader, seen, /event: status\ndata: \{[^\n]*"outbox_depth":\{[^\n]*"held":1/);

      const replay = (body: unknown) =>
        get('/api/dlq/replay', ADMIN_KEY, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect((await replay({ ids: [] })).status).toBe(400);
      const replayed = (await (await replay({ ids: [broken.id, 999_999] })).json()) as BulkReplayResult;
      expect(replayed.results).toEqual([
        { id: broken.id, status: 'dead' },
        { id: 999_999, error: { code: 'MAILGATE_ERR_SERVER_NOT_FOUND', message: expect.any(String) } },
      ]);
      await readUntil(reader, seen, new RegExp(`event: item\\ndata: \\{"id":${broken.id},"state":"dead"\\}`));

      // Stopping ends the stream; the service's stop does not wait for it.
      stopped = true;
      await service.stop();
      let done = false;
      while (!done) ({ done } = await reader.read());
      expect(done).toBe(true);
    } finally {
      if (!stopped) await service.stop();
      await emu.stop();
    }
  });
});
