/**
 * Mailgun routes: forward() to a URL ending in `mime` posts the message in the field `body-mime`
 * (urlencoded, or multipart). Authenticity: `signature` = hex HMAC-SHA256(signing key,
 * timestamp + token). The body is not signed, so the timestamp must be fresh and each token is
 * taken once (the replay cache).
 *
 * Mailgun stops retrying only on 406; every other status is retried for 8 h. So 406 answers what
 * can never be Mailgun's genuine, storable delivery (unsigned, forged, replayed, store()
 * notifications); a body we cannot read gets 400 and is retried.
 *
 * No event id: the token is per delivery attempt, and the Message-ID is chosen by whoever sent
 * the mail (a dedupe key on it would let any sender suppress later mail); the sink deduplicates
 * on the SHA-256 of the bytes.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { MailgunEntry } from '../config.js';
import { urlencodedBody } from '../encode.js';
import { formOf } from '../form.js';
import { addresses, rawHeader } from '../mime.js';
import { type ProviderModule, refusalStatuses } from '../provider.js';
import { refuse, safeEqual } from '../util.js';

export function mailgunSignature(signingKey: string, timestamp: string, token: string): string {
  return createHmac('sha256', signingKey)
    .update(timestamp + token)
    .digest('hex');
}

export const mailgun: ProviderModule<MailgunEntry> = {
  name: 'mailgun',

  async verify(req, config, ctx) {
    const form = await formOf(req, config.body_limit);
    // Repeated fields: the last value is the one Mailgun means.
    const timestamp = form.text('timestamp');
    const token = form.text('token');
    const signature = form.text('signature');
    if (!timestamp || !token || !signature) refuse('unsigned', 'no Mailgun timestamp, token and signature fields');
    if (!safeEqual(signature.toLowerCase(), mailgunSignature(config.signing_key, timestamp, token))) {
      refuse('forged', 'the Mailgun signature does not match the signing key');
    }
    const ts = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
    if (!(Math.abs(ctx.now() / 1000 - ts) <= config.max_age_s))
      refuse('replayed', `the signed timestamp is more than ${config.max_age_s} s away from now`);
    // Kept twice the window: a token can only come back with a timestamp inside it.
    if (!ctx.remember(`mailgun:${config.name}:${token}`, 2 * config.max_age_s * 1000))
      refuse('replayed', 'the Mailgun token was seen before');
  },

  async normalize(req, config) {
    const form = await formOf(req, config.body_limit);
    if (form.last('message-url') !== undefined) {
      refuse('unsupported', 'a Mailgun store() notification: use forward() to this URL (ending in "mime") instead');
    }
    const raw = form.last('body-mime');
    if (raw === undefined) refuse('unsupported', 'no "body-mime" field: the Mailgun route must forward() to a URL ending in "mime"');
    const recipient = form.text('recipient');
    const sender = form.text('sender');
    return [
      {
        raw,
        envelope: {
          provider: 'mailgun',
          ...(recipient
            ? {
                to: recipient
                  .split(',')
                  .map((r) => r.trim())
                  .filter(Boolean),
              }
            : {}),
          ...(sender ? { from: sender } : {}),
        },
      },
    ];
  },

  refusalStatus: refusalStatuses({ unsigned: 406, forged: 406, replayed: 406, unsupported: 406 }),

  accepted: () => ({ status: 200, body: { ok: true } }),

  fromSecrets: (s, need) => ({ signing_key: need(s.signingKey, '--signing-key') }),
  simulate(raw, config, options) {
    const timestamp = String(Math.floor(options.now / 1000));
    const token = randomBytes(25).toString('hex');
    const recipient = options.envelope?.to?.join(', ') ?? addresses(rawHeader(raw, 'to')).join(', ');
    const body = urlencodedBody([
      ['recipient', recipient],
      ['sender', options.envelope?.from ?? addresses(rawHeader(raw, 'from'))[0] ?? ''],
      ['subject', rawHeader(raw, 'subject') ?? ''],
      ['from', rawHeader(raw, 'from') ?? ''],
      ['body-mime', raw],
      ['timestamp', timestamp],
      ['token', token],
      ['signature', mailgunSignature(config.signing_key, timestamp, token)],
    ]);
    return { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body };
  },
};
