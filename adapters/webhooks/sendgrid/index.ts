/**
 * SendGrid Inbound Parse. Always multipart/form-data. Raw mode sends the message in the field
 * `email` (taken as its exact bytes); parsed mode is rebuilt (parsed.ts). Authenticity: HTTP
 * basic auth in the URL and/or a signed-webhook policy (signature.ts).
 *
 * SendGrid drops the mail on any 3xx or 4xx and retries 5xx for 72 h, so a 4xx is answered only
 * to requests that are not SendGrid's (unsigned, forged) or can never pass (too large). A genuine
 * request we cannot read (`malformed`) gets a 500: SendGrid keeps retrying while the operator
 * sees the refusals, instead of the mail being lost at once.
 */
import { createPublicKey } from 'node:crypto';
import type { SendGridEntry } from '../config.js';
import { encodeHeaderValue, rawHeader, addresses } from '../mime.js';
import { multipartBody } from '../encode.js';
import { formOf, type ParsedForm } from '../form.js';
import { type NormalizedMessage, type ProviderModule, refusalStatuses } from '../provider.js';
import type { Envelope } from '../../../src/pipeline/types.js';
import { basicAuthHeader, checkBasicAuth, isRecord, num } from '../util.js';
import { rebuildParsed } from './parsed.js';
import { pemPrivateKey, signatureHeaders, verifySignature } from './signature.js';

export { signatureHeaders } from './signature.js';

function envelopeOf(form: ParsedForm): Envelope {
  const env: Envelope = { provider: 'sendgrid' };
  try {
    const parsed: unknown = JSON.parse(form.text('envelope') ?? 'null');
    if (isRecord(parsed)) {
      if (Array.isArray(parsed['to'])) env.to = parsed['to'].filter((t): t is string => typeof t === 'string');
      if (typeof parsed['from'] === 'string') env.from = parsed['from'];
    }
  } catch {
    // The envelope is metadata beside the message: an unreadable one is left out, not a refusal.
  }
  const ip = form.text('sender_ip');
  const spf = form.text('SPF');
  const dkim = form.text('dkim');
  const score = num(form.text('spam_score'));
  if (ip) env.remoteAddress = ip;
  if (spf) env.spf = spf;
  if (dkim) env.dkim = dkim;
  if (score !== undefined) env.spamScore = score;
  return env;
}

export const sendgrid: ProviderModule<SendGridEntry> = {
  name: 'sendgrid',

  authorize(req, config) {
    if (config.basic_auth) checkBasicAuth(req, config.basic_auth);
  },

  async verify(req, config, ctx) {
    if (config.basic_auth) checkBasicAuth(req, config.basic_auth);
    if (config.public_key !== undefined) verifySignature(req, config.public_key, config.max_age_s, ctx.now());
  },

  async normalize(req, config): Promise<NormalizedMessage[]> {
    const form = await formOf(req, config.body_limit);
    const raw = form.last('email') ?? rebuildParsed(form);
    return [{ raw, envelope: envelopeOf(form) }];
  },

  refusalStatus: refusalStatuses({ malformed: 500 }),

  accepted: () => ({ status: 200, body: { ok: true } }),

  fromSecrets(s, need) {
    if (s.basicAuth === undefined && s.privateKeyPem === undefined) need(undefined, '--basic-auth user:pass or --private-key FILE');
    const pub = s.privateKeyPem === undefined ? undefined : createPublicKey(pemPrivateKey(s.privateKeyPem));
    return {
      ...(s.basicAuth && { basic_auth: s.basicAuth }),
      ...(pub && { public_key: pub.export({ type: 'spki', format: 'der' }).toString('base64') }),
    };
  },
  simulate(raw, config, options) {
    const from = options.envelope?.from ?? addresses(rawHeader(raw, 'from'))[0] ?? '';
    const to = options.envelope?.to ?? addresses(rawHeader(raw, 'to'));
    const { body, boundary } = multipartBody(
      [
        { name: 'dkim', value: '{@example.com : pass}' },
        { name: 'email', value: raw },
        { name: 'to', value: encodeHeaderValue(rawHeader(raw, 'to') ?? '') },
        { name: 'from', value: encodeHeaderValue(rawHeader(raw, 'from') ?? '') },
        { name: 'sender_ip', value: options.envelope?.remoteAddress ?? '192.0.2.10' },
        { name: 'envelope', value: JSON.stringify({ to, from }) },
        { name: 'subject', value: rawHeader(raw, 'subject') ?? '' },
        { name: 'spam_score', value: '0.1' },
        { name: 'charsets', value: JSON.stringify({ to: 'UTF-8', from: 'UTF-8', subject: 'UTF-8' }) },
        { name: 'SPF', value: 'pass' },
      ],
      'xYzZY',
    );
    const headers: Record<string, string> = { 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'User-Agent': 'Sendlib/1.0' };
    if (config.basic_auth) headers['Authorization'] = basicAuthHeader(config.basic_auth);
    if (options.privateKeyPem !== undefined)
      Object.assign(headers, signatureHeaders(body, pemPrivateKey(options.privateKeyPem), options.now));
    return { method: 'POST', headers, body };
  },
};
