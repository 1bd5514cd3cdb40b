/**
 * Postmark inbound: one message per JSON POST. `RawEmail` (when "Include raw email content" is
 * on) is the message; its bytes are the UTF-8 encoding of the JSON string (see jsonStringBytes).
 * Without it the message is rebuilt from the parsed fields (rebuild.ts). `MessageID` is
 * Postmark's id of the inbound message, the same on every retry: the event id.
 *
 * No signature: HTTP basic auth in the webhook URL, sent preemptively. Postmark stops retrying
 * only on 403, so 403 answers requests that are not Postmark's or can never be stored; anything
 * else it retries for about 10.5 h.
 */
import { createHash } from 'node:crypto';
import type { Envelope } from '../../../src/pipeline/types.js';
import type { PostmarkEntry } from '../config.js';
import { addresses, rawHeader } from '../mime.js';
import { type ProviderModule, refusalStatuses } from '../provider.js';
import { basicAuthHeader, checkBasicAuth, isRecord, jsonBody, jsonStringBytes, num, refuse, str } from '../util.js';
import { rebuildPostmark } from './rebuild.js';

const bare = (v: string) => v.trim().replace(/^<|>$/g, '');

function envelopeOf(p: Record<string, unknown>): Envelope {
  const list = Array.isArray(p['Headers']) ? p['Headers'].filter(isRecord) : [];
  const first = list[0];
  const returnPath = first && str(first['Name'])?.toLowerCase() === 'return-path' ? str(first['Value']) : undefined;
  const spam = (name: string) => str(list.find((h) => str(h['Name'])?.toLowerCase() === name)?.['Value']);
  const original = str(p['OriginalRecipient']);
  const toFull = Array.isArray(p['ToFull']) ? p['ToFull'].filter(isRecord).map((t) => str(t['Email'])) : [];
  const to = original ? [original] : toFull.filter((t): t is string => !!t);
  const from = returnPath ? bare(returnPath) : str(p['From']);
  const env: Envelope = { provider: 'postmark' };
  if (to.length > 0) env.to = to;
  if (from) env.from = from;
  const status = spam('x-spam-status');
  const score = num(spam('x-spam-score'));
  if (status) env.spamVerdict = status;
  if (score !== undefined) env.spamScore = score;
  const extra: Record<string, string> = {};
  for (const key of ['MailboxHash', 'Tag', 'MessageStream'] as const) {
    const v = str(p[key]);
    if (v) extra[key] = v;
  }
  if (Object.keys(extra).length > 0) env.extra = extra;
  return env;
}

export const postmark: ProviderModule<PostmarkEntry> = {
  name: 'postmark',

  authorize(req, config) {
    checkBasicAuth(req, config.basic_auth);
  },

  async verify(req, config) {
    checkBasicAuth(req, config.basic_auth);
  },

  async normalize(req) {
    const p = jsonBody(req);
    if (!isRecord(p)) refuse('malformed', 'the Postmark payload is not a JSON object');
    const rawEmail = str(p['RawEmail']);
    if (rawEmail === undefined && p['Headers'] === undefined && p['TextBody'] === undefined) {
      refuse('malformed', 'neither RawEmail nor the parsed fields of an inbound message');
    }
    const raw = rawEmail !== undefined && rawEmail !== '' ? jsonStringBytes(rawEmail) : rebuildPostmark(p);
    const id = str(p['MessageID']);
    return [{ raw, envelope: envelopeOf(p), ...(id ? { eventId: id } : {}) }];
  },

  refusalStatus: refusalStatuses({ unsigned: 403, unsupported: 403 }),

  accepted: () => ({ status: 200, body: { ok: true } }),

  fromSecrets: (s, need) => ({ basic_auth: need(s.basicAuth, '--basic-auth user:pass') }),
  simulate(raw, config, options) {
    const from = options.envelope?.from ?? addresses(rawHeader(raw, 'from'))[0] ?? '';
    const to = options.envelope?.to ?? addresses(rawHeader(raw, 'to'));
    const payload = {
      FromName: '',
      MessageStream: 'inbound',
      From: addresses(rawHeader(raw, 'from'))[0] ?? '',
      FromFull: { Email: addresses(rawHeader(raw, 'from'))[0] ?? '', Name: '', MailboxHash: '' },
      To: rawHeader(raw, 'to') ?? '',
      ToFull: addresses(rawHeader(raw, 'to')).map((e) => ({ Email: e, Name: '', MailboxHash: '' })),
      OriginalRecipient: to[0] ?? '',
      Subject: rawHeader(raw, 'subject') ?? '',
      MessageID: deterministicUuid(raw, options.now),
      Date: rawHeader(raw, 'date') ?? '',
      MailboxHash: '',
      TextBody: '',
      HtmlBody: '',
      Tag: '',
      Headers: [
        { Name: 'Return-Path', Value: `<${from}>` },
        { Name: 'Message-ID', Value: rawHeader(raw, 'message-id') ?? '' },
      ],
      Attachments: [],
      RawEmail: raw.toString('utf8'),
    };
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': 'Postmark',
      Authorization: basicAuthHeader(config.basic_auth),
    };
    return { method: 'POST', headers, body: Buffer.from(JSON.stringify(payload), 'utf8') };
  },
};

/** A uuid-shaped id from the message and the time, so a simulated retry carries the same MessageID. */
function deterministicUuid(raw: Buffer, now: number): string {
  const hex = createHash('sha256').update(raw).update(String(now)).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
