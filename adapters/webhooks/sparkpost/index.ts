/**
 * SparkPost relay webhooks: a JSON array of `{ msys: { relay_message } }` items, the message in
 * `content.email_rfc822` (base64 when `email_rfc822_is_base64`). Empty `{ msys: {} }` items are
 * pings and skipped. Authenticity: the static auth_token in X-MessageSystems-Webhook-Token.
 * SparkPost retries any non-2xx (for up to 8 h, as documented for event webhooks) and has re-sent
 * batches after a 200: the sink's SHA-256 deduplication absorbs that.
 */
import type { Envelope, PushRequest } from '../../../src/pipeline/types.js';
import type { SparkPostEntry } from '../config.js';
import { addresses, rawHeader } from '../mime.js';
import { type NormalizedMessage, type ProviderModule, refusalStatuses } from '../provider.js';
import { decodeBase64, header, isRecord, jsonBody, jsonStringBytes, refuse, safeEqual, str } from '../util.js';

export const TOKEN_HEADER = 'x-messagesystems-webhook-token';

function relayMessage(m: Record<string, unknown>, i: number): NormalizedMessage {
  const protocol = str(m['protocol']);
  if (protocol !== undefined && protocol !== 'smtp') refuse('unsupported', `relay message ${i} has protocol "${protocol}", not smtp`);
  const content = isRecord(m['content']) ? m['content'] : refuse('malformed', `relay message ${i} has no content`);
  const rfc822 = str(content['email_rfc822']);
  if (rfc822 === undefined) refuse('malformed', `relay message ${i} has no content.email_rfc822`);
  const raw = content['email_rfc822_is_base64'] === true ? decodeBase64(rfc822, `relay message ${i}`) : jsonStringBytes(rfc822);
  const env: Envelope = { provider: 'sparkpost' };
  const to = str(m['rcpt_to']);
  const from = str(m['msg_from']);
  if (to) env.to = [to];
  if (from) env.from = from;
  const extra: Record<string, string> = {};
  for (const key of ['friendly_from', 'customer_id', 'webhook_id'] as const) {
    const v = m[key];
    if (typeof v === 'string' || typeof v === 'number') extra[key] = String(v);
  }
  if (Object.keys(extra).length > 0) env.extra = extra;
  // Relay messages carry no documented id; one is used when present.
  const id = str(m['event_id']) ?? str(m['id']);
  return { raw, envelope: env, ...(id ? { eventId: id } : {}) };
}

/** The token header is the whole proof: checked before the body is read, and again in verify. */
function checkToken(req: Pick<PushRequest, 'headers'>, config: SparkPostEntry): void {
  const token = header(req, TOKEN_HEADER);
  if (!token) refuse('unsigned', 'no X-MessageSystems-Webhook-Token header');
  if (!safeEqual(token, config.auth_token)) refuse('forged', 'the X-MessageSystems-Webhook-Token does not match auth_token');
}

export const sparkpost: ProviderModule<SparkPostEntry> = {
  name: 'sparkpost',

  authorize: checkToken,

  async verify(req, config) {
    checkToken(req, config);
  },

  async normalize(req) {
    const items = jsonBody(req);
    if (!Array.isArray(items)) refuse('malformed', 'the SparkPost payload is not a JSON array');
    const out: NormalizedMessage[] = [];
    items.forEach((item, i) => {
      const msys = isRecord(item) && isRecord(item['msys']) ? item['msys'] : refuse('malformed', `item ${i} has no msys object`);
      if (msys['relay_message'] === undefined) return; // a ping
      if (!isRecord(msys['relay_message'])) refuse('malformed', `item ${i}: relay_message is not an object`);
      out.push(relayMessage(msys['relay_message'], i));
    });
    return out;
  },

  refusalStatus: refusalStatuses(),

  accepted: () => ({ status: 200, body: { ok: true } }),

  fromSecrets: (s, need) => ({ auth_token: need(s.token, '--token') }),
  simulate(raw, config, options) {
    const item = {
      msys: {
        relay_message: {
          content: {
            email_rfc822: raw.toString('base64'),
            email_rfc822_is_base64: true,
            subject: rawHeader(raw, 'subject') ?? '',
            to: addresses(rawHeader(raw, 'to')),
          },
          customer_id: '1337',
          friendly_from: rawHeader(raw, 'from') ?? '',
          msg_from: options.envelope?.from ?? addresses(rawHeader(raw, 'from'))[0] ?? '',
          rcpt_to: options.envelope?.to?.[0] ?? addresses(rawHeader(raw, 'to'))[0] ?? '',
          webhook_id: '1234567890',
          protocol: 'smtp',
        },
      },
    };
    const headers = { 'Content-Type': 'application/json', 'X-MessageSystems-Webhook-Token': config.auth_token };
    return { method: 'POST', headers, body: Buffer.from(JSON.stringify([item]), 'utf8') };
  },
};
