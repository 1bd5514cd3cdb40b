/**
 * SMTP and LMTP intake through `mailgate serve` (in-process `startService`, compiled) into the
 * emulator, with real clients: nodemailer's SMTP transport and a raw socket for the protocol's
 * edges. 250 only once the message is stored; a resend of the same bytes is the same comment;
 * 550 for unknown recipients at RCPT; 552 for SIZE and for streamed oversize (memory flat); LMTP
 * answers per recipient; STARTTLS, AUTH and allow_from; 451 while the store is locked, then the
 * retry lands.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import type { Service } from '../../src/service/index.js';
import { textMessage } from '../imap/messages.js';
import { eventually, ROOT } from '../service/serve-process.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { RawClient } from './client.js';
import { drained } from '../support/drained.js';

const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
const startService: typeof import('../../src/service/index.js').startService = async (...args) =>
  ((await import(SERVICE)) as typeof import('../../src/service/index.js')).startService(...args);

const MIB = 1024 * 1024;
let dir: string;
let emu: StartedEmulator;
let service: Service;
const ports: Record<string, number> = {};

function selfSignedCert(at: string): { key: string; cert: string } {
  const key = join(at, 'key.pem');
  const cert = join(at, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
    ],
    { stdio: 'ignore' },
  );
  return { key, cert };
}

const RECIPIENTS = [{ match: 'support@example.com' }, { match: '*@billing.example.com', route: 'billing' }];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-smtp-'));
  emu = await startEmulator({ autoCreateSources: true });
  const tls = selfSignedCert(dir);
  const config = loadConfig({
    overrides: {
      store: `sqlite:${join(dir, 'mailgate.db')}`,
      api: { url: emu.url, token: emu.token, retry: { max_attempts: 10, base_delay_ms: 10, max_delay_ms: 20 } },
      server: { listen: '127.0.0.1:0' },
      delivery: { max_documents: 50, flush_ms: 0 },
      routes: [
        {
          name: 'support',
          source: 'acme/support',
          user_properties: { 'string:Plus': '{envelope.extra.plus}', 'string:Helo': '{envelope.helo}' },
        },
        { name: 'billing', source: 'acme/billing' },
      ],
      adapters: {
        smtp: [
          { name: 'mx', route: 'support', listen: '127.0.0.1:0', recipients: RECIPIENTS, max_message_bytes: MIB },
          { name: 'lmtp', route: 'support', listen: '127.0.0.1:0', lmtp: true, recipients: RECIPIENTS },
          {
            name: 'secure',
            route: 'support',
            listen: '127.0.0.1:0',
            recipients: [{ match: '*' }],
            tls: { ...tls, required: true },
            auth: { users: [{ user: 'relay', pass: 'relay-password-1234' }] },
          },
          {
            name: 'guarded',
            route: 'support',
            listen: '127.0.0.1:0',
            recipients: [{ match: '*' }],
            allow_from: ['10.0.0.0/8', '2001:db8::/32'],
          },
        ],
      },
      log_level: 'info',
    } as never,
  });
  service = await startService(drained(config), { logger: createLogger(false) });
  for (const e of service.adapters) {
    await eventually(() => e.adapter.health!()[0]!.state === 'listening', `${e.name} listening`);
    ports[e.name] = Number(String(e.adapter.health!()[0]!.detail!['address']).split(':').pop());
  }
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await emu?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const transport = (port: number, extra: Record<string, unknown> = {}) =>
  nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, ...extra } as never);

/** A message whose bytes are its own (Message-ID and body from `tag`). */
const message = (tag: string) => textMessage(0, `message ${tag}`).replace('<msg-0@mailgate.test>', `<${tag}@mailgate.test>`);

async function session(name: string, helo = 'client.example.org'): Promise<RawClient> {
  const { client, greeting } = await RawClient.open(ports[name]!);
  expect(greeting.code).toBe(220);
  expect((await client.cmd(`${name === 'lmtp' ? 'LHLO' : 'EHLO'} ${helo}`)).code).toBe(250);
  return client;
}

const comments = () => emu.emulator.stats().comments;

describe('SMTP intake through mailgate serve', () => {
  it('answers 250 once stored, delivers one comment, and answers a resend of the same bytes 250 without a second one', async () => {
    const before = comments();
    const raw = message('first');
    const info = await transport(ports['mx']!).sendMail({ envelope: { from: 'a@example.org', to: ['support@example.com'] }, raw });
    expect(info.response).toMatch(/^250 OK: queued as \d+/);
    await eventually(() => comments() === before + 1, 'one comment');
    const again = await transport(ports['mx']!).sendMail({ envelope: { from: 'a@example.org', to: ['support@example.com'] }, raw });
    expect(again.response).toMatch(/^250 OK: already queued as \d+/);
    await eventually(async () => (await service.runtime.store.outboxDepth()) === 0, 'the outbox to empty');
    expect(comments()).toBe(before + 1);
    expect(emu.emulator.stats().ai_units).toBe(before + 1);
  });

  it('refuses unknown recipients with 550 at RCPT, accepts a plus address by its base address', async () => {
    const c = await session('mx');
    expect((await c.cmd('MAIL FROM:<a@example.org>')).code).toBe(250);
    expect((await c.cmd('RCPT TO:<nobody@example.com>')).code).toBe(550);
    expect((await c.cmd('RCPT TO:<someone@example.net>')).code).toBe(550);
    expect((await c.cmd('RCPT TO:<support+vip@example.com>')).code).toBe(250);
    expect((await c.cmd('DATA')).code).toBe(354);
    expect((await c.data(message('plus'))).code).toBe(250);
    expect((await c.cmd('QUIT')).code).toBe(221);
  });

  it('refuses a message over the limit: at MAIL FROM by its SIZE, else with 552 after DATA, and takes the next one', async () => {
    const c = await session('mx');
    expect((await c.cmd(`MAIL FROM:<a@example.org> SIZE=${MIB + 1}`)).code).toBe(552);
    expect((await c.cmd('MAIL FROM:<a@example.org>')).code).toBe(250);
    expect((await c.cmd('RCPT TO:<support@example.com>')).code).toBe(250);
    expect((await c.cmd('DATA')).code).toBe(354);
    const line = `${'x'.repeat(998)}\r\n`;
    expect((await c.data(message('big') + line.repeat(Math.ceil((MIB + 10) / line.length)))).code).toBe(552);
    expect((await c.cmd('MAIL FROM:<a@example.org>')).code).toBe(250);
    expect((await c.cmd('RCPT TO:<support@example.com>')).code).toBe(250);
    expect((await c.cmd('DATA')).code).toBe(354);
    expect((await c.data(message('after-big'))).code).toBe(250);
    c.destroy();
  });

  it('streams a 50 MB message against a 1 MB limit without holding it: 552, memory flat', async () => {
    // A full collection before each reading, so the test counts what the gateway keeps, not garbage
    // the collector has not reached yet (how much of that there is depends on the Node release).
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    const held = (): number => {
      collect();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const base = held();
    const kept: number[] = [];
    const c = await session('mx');
    expect((await c.cmd('MAIL FROM:<a@example.org>')).code).toBe(250);
    expect((await c.cmd('RCPT TO:<support@example.com>')).code).toBe(250);
    expect((await c.cmd('DATA')).code).toBe(354);
    const chunk = Buffer.from(`${'y'.repeat(1022)}\r\n`.repeat(64));
    c.write(message('huge'));
    for (let sent = 0; sent < 50 * MIB; sent += chunk.length) {
      if (!c.write(chunk)) await c.drained();
      if (sent % (8 * MIB) < chunk.length) kept.push(held() - base);
    }
    const answer = await c.data('');
    kept.push(held() - base);
    expect(answer.code).toBe(552);
    // Holding the message would keep what was sent so far through every collection (40 MB at the
    // 40 MB reading, 50 MB at the end); counting and dropping it keeps only the chunks in flight
    // between the socket and the listener's stream (measured 0–16 MB, flat over the message).
    expect(Math.max(...kept)).toBeLessThan(32 * MIB);
    expect(kept.at(-1)!).toBeLessThan(16 * MIB);
    c.destroy();
  });
});

describe('LMTP intake', () => {
  it('answers each recipient after its route’s item is stored: one item per route', async () => {
    const before = { support: comments() };
    const c = await session('lmtp');
    expect((await c.cmd('MAIL FROM:<a@example.org>')).code).toBe(250);
    expect((await c.cmd('RCPT TO:<support@example.com>')).code).toBe(250);
    expect((await c.cmd('RCPT TO:<ap@billing.example.com>')).code).toBe(250);
    expect((await c.cmd('RCPT TO:<ar@billing.example.com>')).code).toBe(250);
    expect((await c.cmd('RCPT TO:<unknown@example.com>')).code).toBe(550);
    expect((await c.cmd('DATA')).code).toBe(354);
    const first = await c.data(message('lmtp'));
    const replies = [first, await c.next(), await c.next()];
    expect(replies.map((r) => r.code)).toEqual([250, 250, 250]);
    // Two billing recipients share one item (same id); support's is another.
    const ids = replies.map((r) => /queued as (\d+)/.exec(r.text)?.[1]);
    expect(ids[1]).toBe(ids[2]);
    expect(ids[0]).not.toBe(ids[1]);
    await eventually(() => comments() === before.support + 2, 'two comments (two sources)');
    c.destroy();
  });
});

describe('SMTP security', () => {
  it('requires STARTTLS and AUTH where configured, and takes mail over TLS with valid credentials', async () => {
    const c = await session('secure');
    expect((await c.cmd('MAIL FROM:<a@example.org>')).code).toBe(530);
    expect((await c.startTls()).code).toBe(220);
    expect((await c.cmd('EHLO client.example.org')).text).toContain('AUTH PLAIN LOGIN');
    expect((await c.cmd('MAIL FROM:<a@example.org>')).code).toBe(530);
    const bad = Buffer.from('\0relay\0wrong-password').toString('base64');
    expect((await c.cmd(`AUTH PLAIN ${bad}`)).code).toBe(535);
    c.destroy();
    const info = await transport(ports['secure']!, {
      ignoreTLS: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
      auth: { user: 'relay', pass: 'relay-password-1234' },
    }).sendMail({ envelope: { from: 'a@example.org', to: ['anyone@example.com'] }, raw: message('secure') });
    expect(info.response).toMatch(/^250 /);
  });

  it('refuses a client outside allow_from at connect (554)', async () => {
    const { client, greeting } = await RawClient.open(ports['guarded']!);
    expect(greeting.code).toBe(554);
    client.destroy();
  });

  it('answers 451 while the outbox is full (delivery.max_outbox), and the retry lands once delivery caught up', async () => {
    const api = await startEmulator({ autoCreateSources: true, faults: [{ endpoint: 'sync-raw-emails', status: 503 }] });
    const at = mkdtempSync(join(tmpdir(), 'mailgate-smtp-full-'));
    const full = await startService(
      loadConfig({
        overrides: {
          store: `sqlite:${join(at, 'mailgate.db')}`,
          api: { url: api.url, token: api.token, retry: { max_attempts: 2, base_delay_ms: 10, max_delay_ms: 20 } },
          server: { listen: '127.0.0.1:0' },
          delivery: { max_documents: 50, flush_ms: 0, max_outbox: 1, drain_ms: 0 },
          routes: [
            { name: 'support', source: 'acme/support' },
            { name: 'billing', source: 'acme/billing' },
          ],
          adapters: {
            smtp: [
              { name: 'mx', route: 'support', listen: '127.0.0.1:0', recipients: [{ match: 'support@example.com' }] },
              { name: 'lmtp', route: 'support', listen: '127.0.0.1:0', lmtp: true, recipients: RECIPIENTS },
            ],
          },
        } as never,
      }),
      { logger: createLogger(false) },
    );
    try {
      const mx = full.adapters[0]!.adapter;
      await eventually(() => mx.health!()[0]!.state === 'listening', 'listening');
      const port = Number(String(mx.health!()[0]!.detail!['address']).split(':').pop());
      const send = (tag: string) =>
        transport(port).sendMail({ envelope: { from: 'a@example.org', to: ['support@example.com'] }, raw: message(tag) });
      expect((await send('kept')).response).toMatch(/^250 /);
      // The API refuses everything: the first item stays queued, the route is full.
      await expect(send('waits')).rejects.toMatchObject({ responseCode: 451 });
      expect(mx.health!()[0]!.detail!['deferred']).toBe(1);
      expect(api.emulator.stats().comments).toBe(0);
      // LMTP: the full route's recipient gets 451, the other route's 250, in RCPT order.
      await eventually(() => full.adapters[1]!.adapter.health!()[0]!.state === 'listening', 'LMTP listening');
      const lmtpPort = Number(String(full.adapters[1]!.adapter.health!()[0]!.detail!['address']).split(':').pop());
      const { client: c } = await RawClient.open(lmtpPort);
      expect((await c.cmd('LHLO client.example.org')).code).toBe(250);
      expect((await c.cmd('MAIL FROM:<a@example.org>')).code).toBe(250);
      expect((await c.cmd('RCPT TO:<support@example.com>')).code).toBe(250);
      expect((await c.cmd('RCPT TO:<ap@billing.example.com>')).code).toBe(250);
      expect((await c.cmd('DATA')).code).toBe(354);
      expect([(await c.data(message('split'))).code, (await c.next()).code]).toEqual([451, 250]);
      c.destroy();
      api.emulator.setFaults([]);
      // A sending server retries until it gets its 250.
      await eventually(
        async () =>
          await send('waits').then(
            (i) => /^250 /.test(i.response),
            () => false,
          ),
        'the retry to be accepted',
      );
      await eventually(() => api.emulator.stats().comments === 3, 'both SMTP messages and the LMTP one for billing delivered');
    } finally {
      await full.stop();
      await api.stop();
      rmSync(at, { recursive: true, force: true });
    }
  }, 60_000);
});
