/**
 * Outlook PST/OST files through the upload API: the body is read as it comes and the archive is
 * written to the spool folder (never buffered whole), read item by item there, and the spool is
 * gone once the upload is answered. Through the real HTTP server (the endpoint takes its body as a
 * stream), with the PST shipped with the reader.
 */
import { startOn } from '../support/push-start.js';
import { mkdtemp, readdir, readFile, stat, statfs } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createUploadAdapter } from '../../adapters/upload/adapter.js';
import { createLogger } from '../../src/logger.js';
import { buildApp } from '../../src/server/index.js';
import { ENRON_PST } from '../files/support/pst.js';
import { fixture } from '../server/support.js';
import { MemorySink } from './support/memory-sink.js';

const KEY = 'upload-key-0123456789abcdef';
const MIB = 1024 * 1024;

let closeApp: (() => Promise<unknown>) | undefined;
afterEach(async () => {
  await closeApp?.();
  closeApp = undefined;
});

async function server(extra: Record<string, unknown> = {}) {
  const spool = await mkdtemp(join(tmpdir(), 'mailgate-spool-test-'));
  const upload = createUploadAdapter(
    { name: 'desk', route: 'in', api_keys: [KEY], spool_dir: spool, body_limit: 32 * MIB, ...extra },
    { logger: createLogger(false) },
  );
  const sink = new MemorySink();
  startOn(upload, sink);
  const f = fixture();
  f.deps.push = { endpoints: upload.endpoints() };
  const app = buildApp({ api_keys: [] }, f.deps as never);
  await app.listen({ host: '127.0.0.1', port: 0 });
  closeApp = () => app.close();
  return { port: (app.server.address() as { port: number }).port, sink, spool };
}

interface Answer {
  status: number;
  body: { results?: Array<{ index?: number; dead?: { code: string } }>; error?: { code: string } };
}

function post(port: number, headers: Record<string, string>, body: Readable): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/upload/desk',
      headers: { authorization: `Bearer ${KEY}`, ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Answer['body'] }));
    });
    req.on('error', reject);
    body.pipe(req);
  });
}

/**
 * Declares `declared` bytes, sends only `head` and waits for the answer (a server that reads on
 * would wait for the rest forever); the request is then dropped.
 */
function postHead(
  port: number,
  headers: Record<string, string>,
  declared: number,
  head: Buffer,
): Promise<Answer & { retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/upload/desk',
      headers: { authorization: `Bearer ${KEY}`, 'content-length': String(declared), ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => {
        req.destroy();
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode!, body: JSON.parse(text) as Answer['body'], ...(retryAfter && { retryAfter }) });
      });
    });
    req.on('error', reject);
    req.write(head);
  });
}

/** Free bytes in the spool folder's file system, as the gateway reads them. */
async function freeIn(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/** Files in the spool's per-upload folders, with their sizes. */
async function spooled(spool: string): Promise<number[]> {
  const sizes: number[] = [];
  for (const dir of await readdir(spool))
    for (const f of await readdir(join(spool, dir))) sizes.push((await stat(join(spool, dir, f))).size);
  return sizes;
}

describe('PST/OST through the upload API', () => {
  it('writes the archive to the spool as it arrives, reads every mail item with its folder, and removes the spool', async () => {
    const { port, sink, spool } = await server();
    const pst = await readFile(ENRON_PST);
    let onDisk: number[] = [];
    // The body's last byte is held back until the whole file is on disk in the spool: the request
    // is still open, so the archive was written there as it came, not buffered and written after.
    const body = Readable.from(
      (async function* () {
        yield pst.subarray(0, pst.length - 1);
        for (let i = 0; i < 500 && !(onDisk = await spooled(spool)).includes(pst.length - 1); i++) await delay(20);
        yield pst.subarray(pst.length - 1);
      })(),
    );
    const answer = await post(port, { 'content-type': 'application/vnd.ms-outlook-pst', 'content-length': String(pst.length) }, body);
    expect(onDisk).toContain(pst.length - 1);
    expect(answer.status).toBe(202);
    expect(answer.body.results).toHaveLength(71);
    expect(answer.body.results!.filter((r) => r.dead)).toEqual([]);
    const folders = new Set(sink.stored.map((m) => m.origin.details['folder']));
    expect(folders).toContain('lokay-m/MLOKAY (Non-Privileged)/Sent Items');
    expect(sink.stored.every((m) => m.origin.adapter === 'upload' && typeof m.origin.details['index'] === 'number')).toBe(true);
    expect(await readdir(spool)).toEqual([]);
  });

  it('takes a PST as a multipart file beside an .eml, by its signature', async () => {
    const { port, sink, spool } = await server();
    const pst = await readFile(ENRON_PST);
    const eml = Buffer.from('From: a@example.com\r\nSubject: hello\r\n\r\nbody\r\n');
    const b = 'pst-boundary-42';
    const part = (name: string, bytes: Buffer) => [
      Buffer.from(
        `--${b}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      bytes,
      Buffer.from('\r\n'),
    ];
    const body = Buffer.concat([...part('a.eml', eml), ...part('mailbox.bin', pst), Buffer.from(`--${b}--\r\n`)]);
    const answer = await post(port, { 'content-type': `multipart/form-data; boundary=${b}` }, Readable.from([body]));
    expect(answer.status).toBe(202);
    expect(answer.body.results).toHaveLength(72);
    expect(sink.stored[0]!.raw.equals(eml)).toBe(true);
    expect(sink.stored.slice(1).every((m) => m.origin.details['path'] === 'mailbox.bin' && m.origin.details['folder'] !== undefined)).toBe(
      true,
    );
    expect(await readdir(spool)).toEqual([]);
  });

  it('refuses an archive over body_limit with 413, counted as it comes (no length declared), and keeps nothing', async () => {
    const { port, sink, spool } = await server({ body_limit: 4 * MIB });
    const pst = await readFile(ENRON_PST);
    const answer = await post(
      port,
      { 'content-type': 'application/vnd.ms-outlook-pst', 'transfer-encoding': 'chunked' },
      Readable.from([pst]),
    );
    expect(answer).toMatchObject({ status: 413, body: { error: { code: 'MAILGATE_ERR_UPLOAD_TOO_LARGE' } } });
    expect(sink.stored).toEqual([]);
    expect(await readdir(spool)).toEqual([]);
  });

  it('refuses an archive with more items than max_messages with 413', async () => {
    const { port, sink } = await server({ max_messages: 10 });
    const pst = await readFile(ENRON_PST);
    const answer = await post(port, { 'content-type': 'application/vnd.ms-outlook-pst' }, Readable.from([pst]));
    expect(answer).toMatchObject({ status: 413, body: { error: { code: 'MAILGATE_ERR_UPLOAD_TOO_LARGE' } } });
    expect(sink.stored).toEqual([]);
  });

  it("refuses an archive whose declared length exceeds the spool folder's free space with a retryable 503, writing nothing", async () => {
    const probe = await mkdtemp(join(tmpdir(), 'mailgate-spool-test-'));
    const declared = (await freeIn(probe)) + 64 * MIB;
    const { port, sink, spool } = await server({ body_limit: declared + MIB });
    const pst = await readFile(ENRON_PST);
    const bare = await postHead(port, { 'content-type': 'application/vnd.ms-outlook-pst' }, declared, pst.subarray(0, 64 * 1024));
    expect(bare).toMatchObject({ status: 503, retryAfter: '30', body: { error: { code: 'MAILGATE_ERR_UPLOAD_SPOOL_FULL' } } });
    const b = 'pst-boundary-43';
    const head = Buffer.concat([
      Buffer.from(
        `--${b}\r\nContent-Disposition: form-data; name="file"; filename="box.pst"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      pst.subarray(0, 64 * 1024),
    ]);
    const multipart = await postHead(port, { 'content-type': `multipart/form-data; boundary=${b}` }, declared, head);
    expect(multipart).toMatchObject({ status: 503, retryAfter: '30', body: { error: { code: 'MAILGATE_ERR_UPLOAD_SPOOL_FULL' } } });
    expect(sink.stored).toEqual([]);
    expect(await readdir(spool)).toEqual([]);
    // A declared length that fits is read as before.
    const fits = await post(
      port,
      { 'content-type': 'application/vnd.ms-outlook-pst', 'content-length': String(pst.length) },
      Readable.from([pst]),
    );
    expect(fits.status).toBe(202);
  });
});
