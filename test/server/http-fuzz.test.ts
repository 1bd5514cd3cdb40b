/**
 * Fuzzing the HTTP surface of a real, listening service (probes, admin API, preview, webhook
 * and upload endpoints): malformed JSON, multipart, raw bytes and headers, with a fixed seed.
 * Every answer is either below 500 or carries a coded error, the process never crashes, no
 * adapter fails, and the probes answer afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import type { Service } from '../../src/service/index.js';
import { drained } from '../support/drained.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** The compiled service: its parse pools need the compiled worker (`npm test` builds first). */
const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
const ADMIN_KEY = 'fuzz-admin-key-0123456789';
const UPLOAD_KEY = 'fuzz-upload-key-0123456789';
const SEED = 20261124;
const RUNS = 1500;

let dir: string;
let service: Service;
let host: string;
let port: number;
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-http-fuzz-'));
  const config = loadConfig({
    overrides: {
      store: `sqlite:${join(dir, 'mailgate.db')}`,
      server: { listen: '127.0.0.1:0', api_keys: [ADMIN_KEY], preview: { max_body_bytes: 256 * 1024, max_concurrent: 4 } },
      parsing: { workers: 1 },
      routes: [{ name: 'support', source: 'acme/support' }],
      adapters: {
        webhooks: [
          { name: 'raw-in', provider: 'raw', route: 'support', hmac_secret: 'fuzz-hmac-secret-0123456789abcdef' },
          { name: 'sendgrid-in', provider: 'sendgrid', route: 'support', basic_auth: { user: 'sg', pass: 'fuzz-basic-pass-0123456789' } },
          { name: 'mailgun-in', provider: 'mailgun', route: 'support', signing_key: 'fuzz-mailgun-key-0123456789' },
        ],
        upload: [{ name: 'desk', route: 'support', api_keys: [UPLOAD_KEY] }],
      },
    } as never,
  });
  const { startService } = (await import(SERVICE)) as typeof import('../../src/service/index.js');
  service = await startService(drained(config), { logger: createLogger(false) });
  const url = new URL(service.url);
  host = url.host;
  port = Number(url.port);
});
afterAll(async () => {
  agent.destroy();
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: string;
}

function send(method: string, path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, headers: { host, ...headers, 'content-length': String(body.length) }, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A raw request over its own socket: whatever the server sends before closing, or within the limit. */
function sendRaw(bytes: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      if (text.includes('\r\n\r\n')) socket.end();
    });
    socket.on('error', () => resolve(text));
    socket.on('close', () => resolve(text));
    socket.setTimeout(2_000, () => socket.destroy());
    socket.write(bytes);
  });
}

const PATHS = [
  '/livez',
  '/readyz',
  '/metrics',
  '/preview',
  '/api/status',
  '/api/dlq',
  '/api/dlq/1',
  '/api/dlq/1/raw',
  '/api/dlq/1/replay',
  '/api/dlq/purge',
  '/api/predictions',
  '/api/preview',
  '/api/preview/threads',
  '/api/preview/1',
  '/api/upload/desk',
  '/webhooks/raw-in',
  '/webhooks/sendgrid-in',
  '/webhooks/mailgun-in',
  '/nope',
];
const text = fc
  .string({ unit: 'binary-ascii', maxLength: 40 })
  // Control characters are refused by the client before sending: keep printable ones.
  .map((s) => [...s].filter((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) !== 0x7f).join(''));
const suffix = fc.oneof({ arbitrary: fc.constant(''), weight: 3 }, { arbitrary: text, weight: 1 });
const path = fc
  .tuple(
    fc.constantFrom(...PATHS),
    fc.constantFrom('', '', '', '?', '?limit=', '?limit=-1', '?route=%ff', '?after=1e99', '/..', '%00', '?x=1&x=2'),
    suffix,
  )
  .map(([p, q, t]) => `${p}${q}${t ? encodeURIComponent(t).slice(0, 20) : ''}`);
const auth = fc.constantFrom<Record<string, string>>(
  {},
  { authorization: `Bearer ${ADMIN_KEY}` },
  { authorization: `Bearer ${UPLOAD_KEY}` },
  { authorization: 'Bearer ' },
  { authorization: 'Basic c2c6ZnV6ei1iYXNpYy1wYXNzLTAxMjM0NTY3ODk=' },
  { authorization: 'Basic %%%' },
  { authorization: 'Bearer a b c' },
);
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=latin1',
  'message/rfc822',
  'application/octet-stream',
  'text/plain',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=xyz',
  'multipart/form-data; boundary="a b"',
  'application/x-www-form-urlencoded',
  'application/x-ndjson',
  '',
  ';;;',
  'application/json; boundary=xyz',
);
const json = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.constantFrom(
    '{',
    '[',
    '{"comments":',
    '{"comments":[{}]}',
    '{"comments":[{"id":1}]}',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{}}}',
    '{"comments":' + '['.repeat(2000),
    '{"ids":[1,2,"x"]}',
    '{"all":true,"route":"x"}',
    '{"older_than":"yesterday"}',
    'null',
    '1e999',
    '"\\ud800"',
  ),
  fc.anything({ maxDepth: 3 }).map((v) => {
    try {
      return JSON.stringify(v) ?? 'null';
    } catch {
      return '{}';
    }
  }),
);
const multipart = fc
  .tuple(
    fc.constantFrom('xyz', 'a b', ''),
    fc.array(fc.tuple(text, text, fc.constantFrom('', 'From: a@b\r\n\r\nhi', '\r\n\r\n', '--xyz--')), { maxLength: 4 }),
    fc.boolean(),
  )
  .map(
    ([b, parts, close]) =>
      parts
        .map(
          ([name, file, data]) =>
            `--${b}\r\nContent-Disposition: form-data; name="${name}"; filename="${file}"\r\nContent-Type: message/rfc822\r\n\r\n${data}\r\n`,
        )
        .join('') + (close ? `--${b}--\r\n` : ''),
  );
const body = fc.oneof(
  json,
  multipart,
  fc.uint8Array({ maxLength: 512 }).map((a) => Buffer.from(a).toString('latin1')),
  text,
);
const extra = fc.dictionary(
  fc.constantFrom(
    'x-mailgate-signature',
    'x-idempotency-key',
    'idempotency-key',
    'accept',
    'x-forwarded-for',
    'transfer-encoding-x',
    'cookie',
    'x-proto',
  ),
  fc.oneof(text, fc.constantFrom('t=1,v1=00', 't=9999999999999,v1=' + 'a'.repeat(64), '__proto__', 'constructor')),
  { maxKeys: 3 },
);

const method = fc.oneof(
  { arbitrary: fc.constant('POST'), weight: 3 },
  { arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'), weight: 2 },
);

const RAW_CASES = [
  'GET /livez HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
  'POST /api/preview HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  'POST /api/preview HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n',
  'GET / HTTP/9.9\r\n\r\n',
  '\x00\x01\x02\r\n\r\n',
  'GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nX: \x01\r\n\r\n',
  `GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n${'X-A: b\r\n'.repeat(3000)}\r\n`,
  'GET /livez HTTP/1.0\r\n\r\n',
  `GET /${'a'.repeat(70_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
];

/** Never a 500 without a coded error; every error body the server itself writes is coded. */
function acceptable(a: Answer): boolean {
  if (a.status < 500) return true;
  try {
    const code = (JSON.parse(a.body) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' && code.startsWith('MAILGATE_') && code !== 'MAILGATE_ERR_SERVER_INTERNAL';
  } catch {
    return false;
  }
}

describe('HTTP surface fuzz', () => {
  it(`${RUNS} malformed requests: no uncoded 500, no crash, no failed adapter`, async () => {
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(method, path, auth, contentType, body, extra, async (method, p, a, type, b, x) => {
        const headers: Record<string, string> = { ...x, ...a, ...(type === '' ? {} : { 'content-type': type }) };
        const answer = await send(method, p, headers, Buffer.from(b, 'latin1'));
        if (!acceptable(answer))
          failures.push(`${method} ${p} ${JSON.stringify(headers)} -> ${answer.status} ${answer.body.slice(0, 200)}`);
        return acceptable(answer);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(failures).toEqual([]);
    for (const bytes of RAW_CASES) {
      const answer = await sendRaw(Buffer.from(bytes, 'latin1'));
      expect(answer === '' || /^HTTP\/1\.[01] [1-4]\d\d /.test(answer), JSON.stringify(bytes.slice(0, 60))).toBe(true);
    }
    expect((await send('GET', '/livez', {}, Buffer.alloc(0))).status).toBe(200);
    expect(service.adapters.filter((e) => e.state === 'failed')).toEqual([]);
  });
});
