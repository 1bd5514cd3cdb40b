/**
 * Preview starvation of the service: previews parse in their own pool, so a hostile preview
 * never takes an ingestion worker, and the HTTP thread answers probes while a big one parses.
 * /readyz shows no error text; /api/status keeps it behind the key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import type { Service } from '../../src/service/index.js';
import { ROOT } from './serve-process.js';
import { drained } from '../support/drained.js';

/** The compiled service: its parse pools need the compiled worker (`npm test` builds first). */
const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
const ADMIN_KEY = 'admin-key-0123456789abcdef';
const auth = { authorization: `Bearer ${ADMIN_KEY}` };

/** ~4 MiB of one folded Subject: a few hundred ms of parsing, under the preview body limit. */
const BOMB = Buffer.from(['From: a@example.com', `Subject: ${' x\r\n'.repeat((4 * 1024 * 1024 - 1024) / 4)}`, '', 'body', ''].join('\r\n'));
const SMALL = Buffer.from('From: a@example.com\r\nSubject: hi\r\nMessage-ID: <s@example.com>\r\n\r\nhello\r\n');

let dir: string;
let service: Service;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-preview-isolation-'));
  const config = loadConfig({
    overrides: {
      store: `sqlite:${join(dir, 'mailgate.db')}`,
      server: { listen: '127.0.0.1:0', api_keys: [ADMIN_KEY] },
      // The bomb parses in a few hundred ms; a budget far past that keeps a loaded machine's slower parse an answer, not a timeout.
      parsing: { workers: 1, timeout_ms: 120_000 },
      routes: [{ name: 'support', source: 'acme/support' }],
    } as never,
  });
  const { startService } = (await import(SERVICE)) as typeof import('../../src/service/index.js');
  service = await startService(drained(config), { logger: createLogger(false) });
});
afterAll(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const preview = (body: Buffer) =>
  fetch(`${service.url}/api/preview`, {
    method: 'POST',
    headers: { 'content-type': 'message/rfc822', ...auth },
    body: new Uint8Array(body),
  });

describe('preview starvation', () => {
  it('/livez answers while a big preview parses (the parse is off the HTTP thread)', async () => {
    let previewDone = false;
    const big = preview(BOMB).then(async (r) => {
      previewDone = true;
      return r;
    });
    const live = await fetch(`${service.url}/livez`);
    expect(live.status).toBe(200);
    expect(previewDone).toBe(false);
    expect((await big).status).toBe(200);
  });

  it('a preview never uses an ingestion worker: with the ingestion pool gone, previews still answer', async () => {
    await service.runtime.pool.close();
    const res = await preview(SMALL);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { document: { comment_id: string } }).document.comment_id).toBe(
      Buffer.from('<s@example.com>').toString('hex'),
    );
  });

  it('/readyz carries state and codes only; /api/status has the readiness checks in full behind the key', async () => {
    const ready = (await (await fetch(`${service.url}/readyz`)).json()) as { checks: Record<string, Record<string, unknown>> };
    for (const check of Object.values(ready.checks))
      expect(Object.keys(check).every((k) => ['ok', 'state', 'code'].includes(k))).toBe(true);
    const status = (await (await fetch(`${service.url}/api/status`, { headers: auth })).json()) as {
      readiness: Record<string, { ok: boolean }>;
    };
    expect(status.readiness['store']).toEqual({ ok: true });
  });
});
