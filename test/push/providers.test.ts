/**
 * Push intake through the real service: one `startService` (compiled, SQLite, a real emulator)
 * with an endpoint per webhook provider and an upload endpoint. Each provider's request is built
 * by its own simulate() (its real signature; SES signed with a certificate made here and pinned
 * with `certificates:`, never fetched), posted over HTTP, posted again as the provider's retry,
 * and must end as one comment, billed once, with the envelope recipient mapped into a user
 * property. Refused requests answer the provider's status and code and store nothing.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEntrySchema, type WebhookEntry } from '../../adapters/webhooks/config.js';
import { REFUSAL_CODES, type RefusalKind, type SimulatedRequest } from '../../adapters/webhooks/provider.js';
import { providerOf } from '../../adapters/webhooks/providers.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import type { Service } from '../../src/service/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { eventually } from '../service/serve-process.js';
import { ADMIN_KEY, BEARER_KEY, UPLOAD_KEY, freePort, message, post, startService, type Answer } from './support.js';
import { drained } from '../support/drained.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:mailgate-e2e';
const CERT_URL = 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-e2e.pem';

let dir = '';
let emu: StartedEmulator;
let service: Service;
let entries: WebhookEntry[] = [];
let attackerKey = '';

function makeCertificate(name: string): { key: string; certPath: string } {
  const key = join(dir, `${name}.key`);
  const certPath = join(dir, `${name}.pem`);
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', certPath, '-days', '1', '-subj', `/CN=${name}`],
    {
      stdio: 'ignore',
    },
  );
  return { key: readFileSync(key, 'utf8'), certPath };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-push-e2e-'));
  const sns = makeCertificate('sns');
  attackerKey = makeCertificate('attacker').key;
  emu = await startEmulator({ autoCreateSources: true });
  const port = await freePort();
  const hooks = [
    { name: 'sendgrid-in', provider: 'sendgrid', route: 'support', basic_auth: { user: 'mailgate', pass: 'sendgrid-pass-0123456789' } },
    { name: 'mailgun-in', provider: 'mailgun', route: 'support', signing_key: 'mailgun-signing-key-0123456789' },
    { name: 'postmark-in', provider: 'postmark', route: 'support', basic_auth: { user: 'pm', pass: 'postmark-pass-0123456789' } },
    {
      name: 'ses-in',
      provider: 'ses',
      route: 'support',
      topic_arns: [TOPIC],
      certificates: { [CERT_URL]: sns.certPath },
      simulation: { private_key_pem: sns.key, signing_cert_url: CERT_URL },
    },
    {
      name: 'mandrill-in',
      provider: 'mandrill',
      route: 'support',
      webhook_key: 'mandrill-key-0123456789',
      url: `http://127.0.0.1:${port}/webhooks/mandrill-in`,
    },
    { name: 'sparkpost-in', provider: 'sparkpost', route: 'support', auth_token: 'sparkpost-token-0123456789' },
    { name: 'worker-in', provider: 'raw', route: 'support', bearer_keys: [BEARER_KEY] },
    { name: 'signed-in', provider: 'raw', route: 'support', hmac_secret: 'whsec-0123456789abcdef' },
    { name: 'small-in', provider: 'raw', route: 'support', bearer_keys: [BEARER_KEY], body_limit: 2048 },
  ];
  entries = hooks.map((h) => webhookEntrySchema.parse(h));
  const config = loadConfig({
    overrides: {
      store: `sqlite:${join(dir, 'mg.db')}`,
      api: { url: emu.url, token: emu.token },
      server: { listen: `127.0.0.1:${port}`, api_keys: [ADMIN_KEY] },
      delivery: { flush_ms: 0 },
      routes: [{ name: 'support', source: 'acme/support', user_properties: { 'string:Recipient': '{envelope.to}' } }],
      adapters: {
        webhooks: hooks,
        upload: [
          { name: 'uploads', route: 'support', api_keys: [UPLOAD_KEY] },
          { name: 'small-uploads', route: 'support', api_keys: [UPLOAD_KEY], body_limit: 2048 },
        ],
      },
      log_level: 'error',
    } as never,
  });
  service = await startService(drained(config), { logger: createLogger(false) });
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await emu?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const entry = (name: string) => entries.find((e) => e.name === name)!;
const url = (name: string) => `${service.url}/webhooks/${name}`;
const simulate = (name: string, raw: Buffer, to?: string[], now = Date.now()): SimulatedRequest =>
  providerOf(entry(name)).simulate(raw, entry(name), {
    url: url(name),
    now,
    ...(to ? { envelope: { from: 'bounce@example.org', to } } : {}),
  });

/** Everything the store and the API hold: unchanged by a refused request. */
async function snapshot(): Promise<string> {
  const counts = await service.runtime.store.outboxCounts();
  return JSON.stringify({ counts, comments: emu.emulator.stats().comments, units: emu.emulator.stats().ai_units });
}

function expectRefused(answer: Answer, name: string, kinds: RefusalKind[]): void {
  const module = providerOf(entry(name));
  const kind = kinds.find(
    (k) =>
      REFUSAL_CODES[k] === answer.body.error?.code || (k === 'forged' && answer.body.error?.code === 'MAILGATE_ERR_WEBHOOK_CERTIFICATE'),
  );
  expect({ name, code: answer.body.error?.code, kindFound: kind !== undefined }).toEqual({
    name,
    code: answer.body.error?.code,
    kindFound: true,
  });
  expect({ name, status: answer.status }).toEqual({ name, status: module.refusalStatus(kind!) });
}

const without = (headers: Record<string, string>, ...names: string[]) =>
  Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k.toLowerCase())));

describe('push intake through mailgate serve: refusals store nothing', () => {
  it('refuses forged, unsigned, replayed, truncated, oversized and malformed requests with each provider’s status and code', async () => {
    const before = await snapshot();
    const raw = message('refused');
    const wrong: Record<string, Record<string, unknown>> = {
      'sendgrid-in': { basic_auth: { user: 'mailgate', pass: 'not-the-password-0000' } },
      'mailgun-in': { signing_key: 'not-the-signing-key-0000' },
      'postmark-in': { basic_auth: { user: 'pm', pass: 'not-the-password-0000' } },
      'ses-in': { simulation: { private_key_pem: attackerKey, signing_cert_url: CERT_URL } },
      'mandrill-in': { webhook_key: 'not-the-webhook-key-0000' },
      'sparkpost-in': { auth_token: 'not-the-token-0000000' },
      'worker-in': { bearer_keys: ['not-the-bearer-key-0000'] },
      'signed-in': { hmac_secret: 'not-the-hmac-secret-0000' },
    };
    for (const [name, over] of Object.entries(wrong)) {
      const forgedEntry = webhookEntrySchema.parse({ ...entry(name), ...over });
      const req = providerOf(forgedEntry).simulate(raw, forgedEntry, { url: url(name), now: Date.now() });
      expectRefused(await post(url(name), req), name, ['forged']);
    }

    // Unsigned: the request without its credentials (headers; for SES the body's signature fields).
    const authHeaders = ['authorization', 'x-mandrill-signature', 'x-messagesystems-webhook-token', 'x-mailgate-signature'];
    for (const name of ['sendgrid-in', 'postmark-in', 'mandrill-in', 'sparkpost-in', 'worker-in', 'signed-in']) {
      const req = simulate(name, raw);
      expectRefused(await post(url(name), { ...req, headers: without(req.headers, ...authHeaders) }), name, ['unsigned']);
    }
    const ses = simulate('ses-in', raw);
    const unsignedSns = JSON.parse(ses.body.toString()) as Record<string, string>;
    delete unsignedSns['Signature'];
    expectRefused(await post(url('ses-in'), { ...ses, body: Buffer.from(JSON.stringify(unsignedSns)) }), 'ses-in', ['unsigned']);
    const mailgunForm = new URLSearchParams(simulate('mailgun-in', raw).body.toString());
    mailgunForm.delete('signature');
    expectRefused(
      await post(url('mailgun-in'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: Buffer.from(mailgunForm.toString()),
      }),
      'mailgun-in',
      ['unsigned'],
    );

    // Replayed: signed long ago (SES, the HMAC raw endpoint), or a Mailgun token taken before.
    const old = Date.now() - 6 * 3600_000;
    expectRefused(await post(url('ses-in'), simulate('ses-in', raw, undefined, old)), 'ses-in', ['replayed']);
    expectRefused(await post(url('signed-in'), simulate('signed-in', raw, undefined, old)), 'signed-in', ['replayed']);
    expectRefused(await post(url('mailgun-in'), simulate('mailgun-in', raw, undefined, old)), 'mailgun-in', ['replayed']);

    // Truncated: the body cut in half, headers as sent.
    for (const name of ['sendgrid-in', 'mailgun-in', 'postmark-in', 'ses-in', 'mandrill-in', 'sparkpost-in', 'signed-in']) {
      const req = simulate(name, raw);
      expectRefused(await post(url(name), { ...req, body: req.body.subarray(0, Math.floor(req.body.length / 2)) }), name, [
        'malformed',
        'forged',
        'unsigned',
        'unsupported',
      ]);
    }

    // Oversized: over body_limit (2048 bytes) of small-in.
    const big = await post(url('small-in'), simulate('small-in', message('big', 'x'.repeat(4096))));
    expectRefused(big, 'small-in', ['too_large']);
    const bigUpload = await post(`${service.url}/api/upload/small-uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${UPLOAD_KEY}`, 'content-type': 'message/rfc822' },
      body: message('big-upload', 'x'.repeat(4096)),
    });
    expect({ status: bigUpload.status, code: bigUpload.body.error?.code }).toEqual({ status: 413, code: 'MAILGATE_ERR_UPLOAD_TOO_LARGE' });

    // Malformed: a body the provider cannot read, with valid credentials.
    for (const name of ['postmark-in', 'sparkpost-in']) {
      const req = simulate(name, raw);
      expectRefused(await post(url(name), { ...req, body: Buffer.from('{"not json') }), name, ['malformed']);
    }
    const sg = simulate('sendgrid-in', raw);
    expectRefused(await post(url('sendgrid-in'), { ...sg, body: Buffer.from('no multipart here') }), 'sendgrid-in', ['malformed']);

    expect(await snapshot()).toBe(before);
  });
});

describe('push intake through mailgate serve: delivered once', () => {
  it('takes each provider’s request and its retry, delivers one comment per message with the envelope recipient', async () => {
    const start = emu.emulator.stats();
    const names = ['sendgrid-in', 'mailgun-in', 'postmark-in', 'ses-in', 'mandrill-in', 'sparkpost-in', 'worker-in', 'signed-in'];
    const sent = new Map<string, string>();
    for (const name of names) {
      const to = `${name}@inbound.example.com`;
      sent.set(name, to);
      const raw = message(`ok-${name}`);
      const req = simulate(name, raw, [to]);
      const first = await post(url(name), req);
      expect({ name, status: first.status }).toEqual({ name, status: 200 });
      // The provider's retry: the same request (Mailgun signs each attempt afresh with a new token).
      const retry = await post(url(name), name === 'mailgun-in' ? simulate(name, raw, [to]) : req);
      expect({ name, status: retry.status }).toEqual({ name, status: 200 });
    }
    const store = service.runtime.store;
    await eventually(async () => (await store.counters('support'))[0]?.delivered === names.length, `${names.length} delivered`);
    const stats = emu.emulator.stats();
    expect(stats.comments - start.comments).toBe(names.length);
    expect(stats.ai_units - start.ai_units).toBe(names.length);

    // Each item: one per provider, its comment in the API with the envelope recipient.
    const counts = await store.outboxCounts();
    expect(counts.filter((c) => c.route === 'support').reduce((n, c) => n + c.count, 0)).toBe(names.length);
    // Ids are not contiguous: a retry without an event id is found a duplicate by its insert, which uses up an id.
    const items = [];
    for (let id = 1; items.length < names.length && id <= 2 * names.length; id++) {
      const item = await store.getItem(id);
      if (item !== undefined) items.push(item);
    }
    expect(items).toHaveLength(names.length);
    for (const item of items) {
      const name = item.origin.instance!;
      const res = await fetch(`${emu.url}/api/v1/sources/acme/support/comments/${item.commentId}`, {
        headers: { authorization: `Bearer ${emu.token}` },
      });
      expect(res.status).toBe(200);
      const comment = ((await res.json()) as { comment: { user_properties: Record<string, unknown> } }).comment;
      expect({ name, adapter: item.origin.adapter, recipient: comment.user_properties['string:Recipient'] }).toEqual({
        name,
        adapter: `webhook:${entry(name).provider}`,
        recipient: sent.get(name),
      });
    }

    // The service's intake metrics count pushed messages per adapter (a retry is received, not queued).
    const text = await (await fetch(`${service.url}/metrics`)).text();
    expect(text).toContain('mailgate_messages_queued_total{route="support",adapter="webhook:raw"} 2');
    expect(text).toContain('mailgate_messages_received_total{route="support",adapter="webhook:raw"} 4');
    expect(text).toContain('mailgate_messages_queued_total{route="support",adapter="webhook:ses"} 1');
  });
});

describe('upload through mailgate serve', () => {
  const auth = { authorization: `Bearer ${UPLOAD_KEY}` };
  const uploadUrl = () => `${service.url}/api/upload/uploads`;
  type Results = Array<{ id: string; item: string; duplicate: boolean; dead?: { code: string } }>;

  it('takes message/rfc822, an mbox of 3 and multipart with a bad file; the bad one is a dead letter with its bytes', async () => {
    const store = service.runtime.store;
    const start = emu.emulator.stats();
    const delivered0 = (await store.counters('support'))[0]?.delivered ?? 0;
    const one = await fetch(uploadUrl(), {
      method: 'POST',
      headers: { ...auth, 'content-type': 'message/rfc822' },
      body: new Uint8Array(message('upload-one')),
    });
    expect(one.status).toBe(202);
    const [single] = ((await one.json()) as { results: Results }).results;
    expect(single).toMatchObject({ duplicate: false });

    const mbox = [1, 2, 3]
      .map((i) => `From sender@example.org Tue Nov 24 12:00:00 2026\n${message(`upload-mbox-${i}`).toString().replace(/\r\n/g, '\n')}`)
      .join('\n');
    const box = await fetch(uploadUrl(), { method: 'POST', headers: { ...auth, 'content-type': 'application/mbox' }, body: mbox });
    expect(box.status).toBe(202);
    const boxed = ((await box.json()) as { results: Results }).results;
    expect(boxed.map((r) => r.duplicate)).toEqual([false, false, false]);

    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(message('upload-part-a'))]), 'a.eml');
    form.append('file', new Blob([new Uint8Array(Buffer.from('\xd0\xcf\x11\xe0 not really an Outlook message', 'latin1'))]), 'broken.msg');
    form.append('file', new Blob([new Uint8Array(message('upload-part-b'))]), 'b.eml');
    const multi = await fetch(uploadUrl(), { method: 'POST', headers: auth, body: form });
    expect(multi.status).toBe(202);
    const parts = ((await multi.json()) as { results: Results }).results;
    expect(parts).toHaveLength(3);
    const bad = parts.find((r) => r.dead !== undefined)!;
    expect(parts.filter((r) => r.dead === undefined)).toHaveLength(2);

    // The dead letter, as `mailgate dlq list` shows it (the admin API), with its bytes.
    const dlq = (await (await fetch(`${service.url}/api/dlq`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as {
      items: Array<{ id: number; origin: { adapter: string }; error: { code: string } }>;
    };
    const listed = dlq.items.find((i) => String(i.id) === bad.item)!;
    expect(listed).toMatchObject({ origin: { adapter: 'upload' }, error: { code: bad.dead!.code } });
    const rawBytes = Buffer.from(
      await (await fetch(`${service.url}/api/dlq/${bad.item}/raw`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).arrayBuffer(),
    );
    expect(rawBytes.toString('latin1')).toBe('\xd0\xcf\x11\xe0 not really an Outlook message');

    const good = [single!, ...boxed, ...parts.filter((r) => r.dead === undefined)];
    await eventually(async () => (await store.counters('support'))[0]?.delivered === delivered0 + good.length, 'the uploads delivered');
    for (const r of good) {
      const state = (await (await fetch(`${uploadUrl()}/${r.id}`, { headers: auth })).json()) as { state: string };
      expect(state.state).toBe('delivered');
    }
    const deadState = (await (await fetch(`${uploadUrl()}/${bad.id}`, { headers: auth })).json()) as { state: string };
    expect(deadState.state).toBe('dead');
    expect(emu.emulator.stats().comments - start.comments).toBe(good.length);
    expect(emu.emulator.stats().ai_units - start.ai_units).toBe(good.length);

    // The unreadable file counts as a dead letter of the upload adapter.
    const text = await (await fetch(`${service.url}/metrics`)).text();
    expect(text).toContain('mailgate_messages_dead_lettered_total{route="support",adapter="upload"} 1');
  });
});
