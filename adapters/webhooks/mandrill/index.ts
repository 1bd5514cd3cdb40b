/**
 * Mandrill inbound: urlencoded, one field `mandrill_events` holding a JSON array of events; each
 * `inbound` event carries the message in `msg.raw_msg` (other event kinds are skipped). Several
 * inbound events become several messages, stored all or nothing.
 *
 * X-Mandrill-Signature = base64 HMAC-SHA1(webhook key, url + key + value of each POST field,
 * sorted by key), the url exactly as configured in Mandrill. Nothing time-bound is signed, so
 * there is no replay window; a replay repeats stored messages, which the sink deduplicates.
 * Mandrill probes the URL with HEAD before it saves the webhook: answered 200.
 */
import { createHmac } from 'node:crypto';
import type { MandrillEntry } from '../config.js';
import { urlencodedBody } from '../encode.js';
import { formOf } from '../form.js';
import { addresses, rawHeader } from '../mime.js';
import { type NormalizedMessage, type ProviderModule, refusalStatuses } from '../provider.js';
import type { Envelope } from '../../../src/pipeline/types.js';
import { header, isRecord, jsonStringBytes, num, refuse, safeEqual, str } from '../util.js';

export function mandrillSignature(key: string, url: string, fields: ReadonlyArray<readonly [string, Buffer]>): string {
  const sorted = [...fields].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const hmac = createHmac('sha1', key).update(url, 'utf8');
  for (const [k, v] of sorted) hmac.update(k, 'utf8').update(v);
  return hmac.digest('base64');
}

function envelopeOf(msg: Record<string, unknown>): Envelope {
  const env: Envelope = { provider: 'mandrill' };
  const email = str(msg['email']);
  if (email) env.to = [email];
  const spam = isRecord(msg['spam_report']) ? num(msg['spam_report']['score']) : undefined;
  if (spam !== undefined) env.spamScore = spam;
  const spf = isRecord(msg['spf']) ? str(msg['spf']['result']) : undefined;
  if (spf) env.spf = spf;
  const dkim = isRecord(msg['dkim']) ? msg['dkim'] : undefined;
  if (dkim && dkim['signed'] === true) env.dkim = dkim['valid'] === true ? 'pass' : 'fail';
  const from = str(msg['from_email']);
  if (from) env.extra = { from_email: from };
  return env;
}

function inboundMessage(event: Record<string, unknown>, i: number): NormalizedMessage {
  const msg = isRecord(event['msg']) ? event['msg'] : refuse('malformed', `mandrill event ${i} has no msg object`);
  const raw = str(msg['raw_msg']);
  if (raw === undefined) refuse('malformed', `mandrill inbound event ${i} has no msg.raw_msg`);
  const id = str(event['_id']) ?? str(msg['_id']);
  return { raw: jsonStringBytes(raw), envelope: envelopeOf(msg), ...(id ? { eventId: id } : {}) };
}

export const mandrill: ProviderModule<MandrillEntry> = {
  name: 'mandrill',

  async handshake(req) {
    return req.method === 'HEAD' ? { status: 200 } : undefined;
  },

  async verify(req, config) {
    const signature = header(req, 'x-mandrill-signature');
    if (!signature) refuse('unsigned', 'no X-Mandrill-Signature header');
    const form = await formOf(req, config.body_limit);
    if (!safeEqual(signature.trim(), mandrillSignature(config.webhook_key, config.url, form.fields))) {
      refuse('forged', 'the Mandrill signature does not match the webhook key and url');
    }
  },

  async normalize(req, config) {
    const form = await formOf(req, config.body_limit);
    const text = form.text('mandrill_events');
    if (text === undefined) refuse('malformed', 'no mandrill_events field');
    let events: unknown;
    try {
      events = JSON.parse(text);
    } catch {
      refuse('malformed', 'mandrill_events is not JSON');
    }
    if (!Array.isArray(events)) refuse('malformed', 'mandrill_events is not a JSON array');
    return events
      .map((e, i) => (isRecord(e) ? ([e, i] as const) : refuse('malformed', `mandrill event ${i} is not an object`)))
      .filter(([e]) => e['event'] === 'inbound')
      .map(([e, i]) => inboundMessage(e, i));
  },

  refusalStatus: refusalStatuses(),

  accepted: () => ({ status: 200, body: { ok: true } }),

  fromSecrets: (s, need, url) => ({ webhook_key: need(s.signingKey, '--signing-key (the webhook key)'), url }),
  simulate(raw, config, options) {
    const to = options.envelope?.to?.[0] ?? addresses(rawHeader(raw, 'to'))[0] ?? '';
    const event = {
      event: 'inbound',
      ts: Math.floor(options.now / 1000),
      msg: {
        raw_msg: raw.toString('utf8'),
        email: to,
        from_email: addresses(rawHeader(raw, 'from'))[0] ?? '',
        subject: rawHeader(raw, 'subject') ?? '',
      },
    };
    const events = Buffer.from(JSON.stringify([event]), 'utf8');
    const body = urlencodedBody([['mandrill_events', events]]);
    const signature = mandrillSignature(config.webhook_key, config.url, [['mandrill_events', events]]);
    return { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Mandrill-Signature': signature }, body };
  },
};
