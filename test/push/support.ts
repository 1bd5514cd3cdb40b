/** Shared pieces of the push end-to-end tests: the compiled service, messages, HTTP and store snapshots. */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../service/serve-process.js';
import type { SimulatedRequest } from '../../adapters/webhooks/provider.js';

/** The compiled service: its parse pool needs the compiled worker (`npm run build` first). */
const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
export const startService: typeof import('../../src/service/index.js').startService = async (...args) =>
  ((await import(SERVICE)) as typeof import('../../src/service/index.js')).startService(...args);

export const ADMIN_KEY = 'admin-key-0123456789abcdef';
export const UPLOAD_KEY = 'upload-key-0123456789abcdef';
export const BEARER_KEY = 'bearer-key-0123456789abcdef';

/** A small, distinct message; its header To differs from any envelope recipient the tests give. */
export function message(tag: string, extra = ''): Buffer {
  return Buffer.from(
    `From: Sender <sender@example.org>\r\nTo: header-to@example.com\r\nSubject: push ${tag}\r\n` +
      `Message-ID: <${tag}@push.example.org>\r\nDate: Tue, 24 Nov 2026 12:00:00 +0000\r\n` +
      `Content-Type: text/plain; charset=utf-8\r\n\r\nThis is message ${tag}.\r\n${extra}`,
    'utf8',
  );
}

export interface Answer {
  status: number;
  headers: Headers;
  body: { error?: { code: string; message: string }; results?: Array<Record<string, unknown>> } & Record<string, unknown>;
}

/** Posts a simulated request as it is (exact bytes and headers). */
export async function post(url: string, req: SimulatedRequest): Promise<Answer> {
  const res = await fetch(url, { method: req.method, headers: req.headers, body: new Uint8Array(req.body) });
  const text = await res.text();
  let body: Answer['body'];
  try {
    body = JSON.parse(text) as Answer['body'];
  } catch {
    body = { text };
  }
  return { status: res.status, headers: res.headers, body };
}

/** A port free at the time of asking (for a configuration that must name its own URL). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
