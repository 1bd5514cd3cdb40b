/**
 * `mailgate serve` with a predict route and a sink, in-process against a real emulator and
 * SQLite: predictions are saved, written to the JSONL file and POSTed to the webhook, served
 * by `GET /api/predictions` behind the admin keys, and the sink is flushed on stop.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import type { PredictionRecord } from '../../src/sinks/outputs.js';
import { textMessage } from '../imap/messages.js';
import { startEmulator } from '../support/emulator.js';
import { startReceiver, verifySignature } from '../pipeline/webhook-receiver.js';
import { eventually, ROOT } from './serve-process.js';

/** The compiled service: its parse pool needs the compiled worker (`npm test` builds first). */
const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;

const ADMIN_KEY = 'admin-key-0123456789abcdef';
const SECRET = 'webhook-secret-abcdef0123456789abcdef';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function jsonl(file: string): PredictionRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as PredictionRecord);
}

describe('mailgate serve: predictions', () => {
  it('saves, sinks and serves the predictions of a predict route', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailgate-serve-predict-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'mail'));
    const n = 40;
    for (let i = 1; i <= n; i++) writeFileSync(join(dir, 'mail', `${i}.eml`), textMessage(i, `refund for order ${i}`));
    const emu = await startEmulator();
    const receiver = await startReceiver();
    try {
      const res = await fetch(`${emu.url}/api/v1/datasets/acme/triage`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${emu.token}`, 'content-type': 'application/json' },
        body: '{"dataset":{}}',
      });
      expect(res.status).toBe(200);
      const file = join(dir, 'predictions.jsonl');
      const config = loadConfig({
        overrides: {
          store: `sqlite:${join(dir, 'mailgate.db')}`,
          api: { url: emu.url, token: emu.token },
          server: { listen: '127.0.0.1:0', api_keys: [ADMIN_KEY] },
          delivery: { max_documents: 5, flush_ms: 0 },
          routes: [
            {
              name: 'triage',
              mode: 'predict',
              dataset: 'acme/triage',
              sink: { jsonl: file, webhook: receiver.url, webhook_secret: SECRET },
            },
          ],
          adapters: { files: [{ name: 'inbox', route: 'triage', paths: [join(dir, 'mail')] }] },
        } as never,
      });
      const { startService } = (await import(SERVICE)) as typeof import('../../src/service/index.js');
      const service = await startService(config, { logger: createLogger(false) });
      const store = service.runtime.store;
      await eventually(async () => (await store.listPredictions({ route: 'triage', limit: 1000 })).length === n, 'every message predicted');

      const get = (query: string, key?: string) =>
        fetch(`${service.url}/api/predictions${query}`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
      expect((await get('?route=triage')).status).toBe(401);
      expect((await get('?limit=0', ADMIN_KEY)).status).toBe(400);
      const page = (await (await get('?route=triage&limit=3', ADMIN_KEY)).json()) as {
        items: PredictionRecord[];
        next_after: number | null;
      };
      expect(page.items).toHaveLength(3);
      expect(page.next_after).toBe(page.items[2]!.id);
      expect(page.items[0]).toMatchObject({
        route: 'triage',
        comment_id: expect.any(String),
        predictions: expect.any(Array),
        model: { version: expect.any(Number) },
      });
      const rest = (await (await get(`?route=triage&limit=1000&after=${page.next_after}`, ADMIN_KEY)).json()) as {
        items: PredictionRecord[];
        next_after: number | null;
      };
      expect(rest.items).toHaveLength(n - 3);
      expect(rest.next_after).toBeNull();

      await service.stop();
      const stored = [...page.items, ...rest.items].map((p) => p.id);
      // Stopped after the drain and a flush: everything is in the file and at the webhook, once.
      expect(jsonl(file).map((l) => l.id)).toEqual(stored);
      const posted = receiver.accepted().flatMap((b) => b.predictions.map((p) => p.id));
      expect(posted.sort((a, b) => a - b)).toEqual(stored);
      for (const post of receiver.posts) expect(verifySignature(SECRET, post.body, post.signature)).toBe(true);
    } finally {
      await receiver.close();
      await emu.stop();
    }
  });
});
