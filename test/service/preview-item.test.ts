/**
 * `GET /api/preview/:id` in a running service: any stored item — delivered, or dead because
 * it never parsed — with its status, its document and the comment built from that document,
 * the same comment the emulator stored.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { textMessage } from '../imap/messages.js';
import { startEmulator } from '../support/emulator.js';
import { eventually, ROOT } from './serve-process.js';

/** The compiled service: its parse pool needs the compiled worker (`npm test` builds first). */
const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
const ADMIN_KEY = 'admin-key-0123456789abcdef';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface PreviewBody {
  id: number;
  status: string;
  outcome?: string;
  document: { raw_email: unknown };
  comment: { id: string; messages: Array<{ body: { text: string } }> } | null;
  error?: { code: string };
}

/** A service reading `<dir>/mail` into `source` of the emulator, its store in `dir`. */
function serviceConfig(dir: string, emu: { url: string; token: string }, source: string) {
  return loadConfig({
    overrides: {
      store: `sqlite:${join(dir, 'mailgate.db')}`,
      api: { url: emu.url, token: emu.token },
      server: { listen: '127.0.0.1:0', api_keys: [ADMIN_KEY] },
      routes: [{ name: 'support', source }],
      adapters: { files: [{ name: 'inbox', route: 'support', paths: [join(dir, 'mail')] }] },
    } as never,
  });
}

describe('mailgate serve: GET /api/preview/:id', () => {
  it('shows a delivered item and a dead letter by id, behind the admin keys', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailgate-preview-item-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'mail'));
    writeFileSync(join(dir, 'mail', '1.eml'), textMessage(1, 'where is my refund for order 1'));
    writeFileSync(join(dir, 'mail', '2.eml'), '');
    const emu = await startEmulator({ autoCreateSources: true });
    try {
      const config = serviceConfig(dir, emu, 'acme/preview-item');
      const { startService } = (await import(SERVICE)) as typeof import('../../src/service/index.js');
      const service = await startService(config, { logger: createLogger(false) });
      try {
        const store = service.runtime.store;
        await eventually(async () => (await store.counters('support'))[0]?.delivered === 1, 'the message delivered');
        const [dead] = await store.listDeadLetters({ limit: 10 });
        const get = (id: number, key?: string) =>
          fetch(`${service.url}/api/preview/${id}`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
        const ids = [1, 2, 3].filter((id) => id !== dead?.id);
        let delivered: PreviewBody | undefined;
        for (const id of ids) {
          const res = await get(id, ADMIN_KEY);
          if (res.status === 200) delivered = (await res.json()) as PreviewBody;
        }
        expect(delivered).toMatchObject({ status: 'delivered', outcome: 'delivered' });
        const res = await fetch(`${emu.url}/api/v1/sources/acme/preview-item/comments/${delivered!.comment!.id}`, {
          headers: { authorization: `Bearer ${emu.token}` },
        });
        const stored = ((await res.json()) as { comment: Record<string, unknown> }).comment;
        const { id, timestamp, messages, user_properties, thread_id } = stored;
        expect(delivered!.comment).toMatchObject({ id, timestamp, messages, user_properties, thread_id });
        expect(delivered!.comment!.messages[0]!.body.text).toContain('message number 1');

        expect((await get(dead!.id)).status).toBe(401);
        const deadBody = (await (await get(dead!.id, ADMIN_KEY)).json()) as PreviewBody;
        expect(deadBody).toMatchObject({ id: dead!.id, status: 'dead', comment: null, error: { code: 'MAILGATE_ERR_MIME_EMPTY' } });
        expect((await get(999_999, ADMIN_KEY)).status).toBe(404);
      } finally {
        await service.stop();
      }
    } finally {
      await emu.stop();
    }
  });

  it("shows a stored item's thread across everything ingested for its source, from the store's thread index", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailgate-preview-thread-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'mail'));
    const reply = (n: number, from: string, minute: number) =>
      [
        `From: ${from}`,
        'To: support@example.com',
        `Subject: Re: order ${n === 0 ? '' : 'status'}`,
        `Message-ID: <thread-${n}@example.com>`,
        ...(n === 0 ? [] : ['In-Reply-To: <thread-0@example.com>', 'References: <thread-0@example.com>']),
        `Date: Mon, 02 Mar 2026 10:${String(minute).padStart(2, '0')}:00 +0000`,
        '',
        `Message ${n} of the thread.`,
        '',
      ].join('\r\n');
    // Three files, read in three service runs: no single run sees the whole thread.
    const emu = await startEmulator({ autoCreateSources: true });
    try {
      const config = serviceConfig(dir, emu, 'acme/preview-thread');
      const { startService } = (await import(SERVICE)) as typeof import('../../src/service/index.js');
      const people = ['Ann <ann@example.com>', 'Support <support@example.com>', 'Ann <ann@example.com>'];
      let last: PreviewBody & { thread_properties: Record<string, unknown> | null } = undefined as never;
      for (const n of [0, 1, 2]) {
        writeFileSync(join(dir, 'mail', `${n}.eml`), reply(n, people[n]!, 5 * n));
        const service = await startService(config, { logger: createLogger(false) });
        try {
          await eventually(async () => (await service.runtime.store.counters('support'))[0]?.delivered === n + 1, `message ${n} delivered`);
          const res = await fetch(`${service.url}/api/preview/${n + 1}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
          last = (await res.json()) as typeof last;
        } finally {
          await service.stop();
        }
      }
      expect(last.thread_properties).toMatchObject({
        thread_position: 2,
        num_messages: 3,
        num_participants: 2,
        first_sender: 'ann@example.com',
        duration: 600,
        response_time: 300,
      });
      expect((last.comment as unknown as { user_properties: Record<string, unknown> }).user_properties['number:Position in Thread']).toBe(
        2,
      );
    } finally {
      await emu.stop();
    }
  });
});
