/**
 * The `raw` provider: the request body is the message, byte for byte (Cloudflare Email
 * Workers, scripts, relays). Envelope and event id travel in X-Mailgate-* headers, covered by the
 * `v2` signature (auth.ts).
 */
import { MAX_ADDRESS_CHARS, MAX_RECIPIENTS } from '../../../src/limits.js';
import type { Envelope, PushRequest } from '../../../src/pipeline/types.js';
import { type NormalizedMessage, type ProviderModule, refusalStatuses, WebhookRefusal } from '../provider.js';
import {
  authorizeRaw,
  ENVELOPE_FROM_HEADER,
  ENVELOPE_TO_HEADER,
  EVENT_ID_HEADER,
  header,
  SIGNATURE_HEADER,
  signRawV2,
  verifyRaw,
  type SignedHeaderValues,
} from './auth.js';
import { providerEntrySchema, type RawConfig } from '../config.js';

export type { RawConfig } from '../config.js';
/** The schema of a raw endpoint entry, common fields included. */
export const rawConfigSchema = providerEntrySchema('raw');

export { ENVELOPE_FROM_HEADER, ENVELOPE_TO_HEADER, EVENT_ID_HEADER } from './auth.js';
const MAX_EVENT_ID_CHARS = 256;

function address(value: string, what: string): string {
  if (value.length > MAX_ADDRESS_CHARS) throw new WebhookRefusal('malformed', `${what} is longer than ${MAX_ADDRESS_CHARS} characters`);
  return value;
}

function envelopeOf(req: PushRequest): Envelope {
  const envelope: Envelope = { provider: 'raw' };
  const from = header(req, ENVELOPE_FROM_HEADER)?.trim();
  if (from) envelope.from = address(from, ENVELOPE_FROM_HEADER);
  const to = header(req, ENVELOPE_TO_HEADER)
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (to && to.length > MAX_RECIPIENTS)
    throw new WebhookRefusal('malformed', `${ENVELOPE_TO_HEADER} names more than ${MAX_RECIPIENTS} recipients`);
  if (to && to.length > 0) envelope.to = to.map((a) => address(a, ENVELOPE_TO_HEADER));
  if (req.remoteAddress) envelope.remoteAddress = req.remoteAddress;
  return envelope;
}

function normalizeRaw(req: PushRequest, config: RawConfig): NormalizedMessage[] {
  if (req.body.length > config.body_limit) throw new WebhookRefusal('too_large', `the body exceeds ${config.body_limit} bytes`);
  if (req.body.length === 0) throw new WebhookRefusal('malformed', 'the body is empty; it must be the message');
  const message: NormalizedMessage = { raw: req.body, envelope: envelopeOf(req) };
  const eventId = header(req, EVENT_ID_HEADER)?.trim();
  if (eventId && eventId.length > MAX_EVENT_ID_CHARS)
    throw new WebhookRefusal('malformed', `${EVENT_ID_HEADER} is longer than ${MAX_EVENT_ID_CHARS} characters`);
  if (eventId) message.eventId = eventId;
  return [message];
}

export const rawProvider: ProviderModule<RawConfig> = {
  name: 'raw',
  authorize: authorizeRaw,
  verify: async (req, config, ctx) => verifyRaw(req, config, ctx),
  normalize: async (req, config) => normalizeRaw(req, config),
  refusalStatus: refusalStatuses({ unsupported: 415 }),
  fromSecrets: (s, need) =>
    s.hmacSecret !== undefined ? { hmac_secret: s.hmacSecret } : { bearer_keys: [need(s.bearer, '--hmac-secret or --bearer')] },
  simulate(raw, config, options) {
    const headers: Record<string, string> = { 'content-type': 'message/rfc822' };
    const signed: SignedHeaderValues = {};
    if (options.envelope?.from !== undefined) signed[ENVELOPE_FROM_HEADER] = options.envelope.from;
    if (options.envelope?.to !== undefined) signed[ENVELOPE_TO_HEADER] = options.envelope.to.join(', ');
    Object.assign(headers, signed);
    if (config.hmac_secret !== undefined) {
      const t = Math.floor(options.now / 1000);
      headers[SIGNATURE_HEADER] = `t=${t},v2=${signRawV2(config.hmac_secret, t, signed, raw)}`;
    } else if (config.bearer_keys !== undefined) {
      headers['authorization'] = `Bearer ${config.bearer_keys[0]!}`;
    }
    return { method: 'POST', headers, body: raw };
  },
};

/** The name the webhook provider map imports. */
export const provider = rawProvider;
