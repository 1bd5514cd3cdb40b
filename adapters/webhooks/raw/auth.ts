/**
 * Authentication of `raw` requests: a Stripe-style HMAC signature header with a timestamp
 * window, or a bearer key. Every comparison is constant-time.
 *
 * The headers that carry meaning beside the body (envelope sender and recipients, event id) are
 * signed too: `v2` covers them, `v1` the body alone. A request whose only matching signature is
 * `v1` is refused when it carries one of them: whoever replays a signed body inside the window
 * could otherwise set its envelope, or take an event id the sender has yet to use (its genuine
 * message would then be answered as a duplicate and never stored). A bearer key covers the whole
 * request as TLS carries it.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { PushRequest } from '../../../src/pipeline/types.js';
import { WebhookRefusal, type VerifyContext } from '../provider.js';
import type { RawConfig } from '../config.js';

export const SIGNATURE_HEADER = 'x-mailgate-signature';
export const ENVELOPE_FROM_HEADER = 'x-mailgate-envelope-from';
export const ENVELOPE_TO_HEADER = 'x-mailgate-envelope-to';
export const EVENT_ID_HEADER = 'x-mailgate-event-id';
/** The headers a `v2` signature covers, in the order they are signed. */
export const SIGNED_HEADERS = [ENVELOPE_FROM_HEADER, ENVELOPE_TO_HEADER, EVENT_ID_HEADER] as const;
/** At most this many `v1=` (and as many `v2=`) entries are tried (key rotation needs two or three). */
const MAX_SIGNATURES = 8;
const HEX_SHA256_RE = /^[0-9a-f]{64}$/;
const MALFORMED_SIGNATURE = `${SIGNATURE_HEADER} is not t=<unix seconds>,v2=<hex sha256> (or v1=)`;

export function header(req: Pick<PushRequest, 'headers'>, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Hex HMAC-SHA256 of `<t>.<body>` (`v1`: the body alone). */
export function signRaw(secret: string, t: number, body: Buffer): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

/** The values of SIGNED_HEADERS as sent (the empty string for a header not sent). */
export type SignedHeaderValues = Partial<Record<(typeof SIGNED_HEADERS)[number], string>>;

/**
 * Hex HMAC-SHA256 of `<t>.<envelope from>\n<envelope to>\n<event id>\n<body>` (`v2`): each the
 * header's value as sent, the empty string when it is not sent.
 */
export function signRawV2(secret: string, t: number, headers: SignedHeaderValues, body: Buffer): string {
  const h = createHmac('sha256', secret).update(`${t}.`);
  for (const name of SIGNED_HEADERS) h.update(`${headers[name] ?? ''}\n`);
  return h.update(body).digest('hex');
}

function signedValues(req: Pick<PushRequest, 'headers'>): SignedHeaderValues {
  const out: SignedHeaderValues = {};
  for (const name of SIGNED_HEADERS) {
    const v = header(req, name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** Equal-length digests compared in constant time; neither length nor content leaks. */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

interface ParsedSignature {
  t: number;
  v1: string[];
  v2: string[];
}

function parseSignature(value: string): ParsedSignature | undefined {
  let t: number | undefined;
  const sig: Omit<ParsedSignature, 't'> = { v1: [], v2: [] };
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const val = part
      .slice(eq + 1)
      .trim()
      .toLowerCase();
    if (key === 't' && /^\d{1,12}$/.test(val)) t = Number(val);
    else if ((key === 'v1' || key === 'v2') && HEX_SHA256_RE.test(val) && sig[key].length < MAX_SIGNATURES) sig[key].push(val);
  }
  return t === undefined || sig.v1.length + sig.v2.length === 0 ? undefined : { t, ...sig };
}

/** Whether any of `given` is `expected`; every entry is compared (no early exit), so the time taken does not tell which one matched. */
function anyMatch(expected: () => Buffer, given: readonly string[]): boolean {
  if (given.length === 0) return false;
  const want = expected();
  let match = false;
  for (const v of given) match = timingSafeEqual(want, Buffer.from(v, 'hex')) || match;
  return match;
}

function verifyHmac(req: PushRequest, secret: string, maxAgeS: number, nowMs: number): void {
  const value = header(req, SIGNATURE_HEADER);
  if (value === undefined || value.trim() === '') throw new WebhookRefusal('unsigned', `no ${SIGNATURE_HEADER} header`);
  const sig = parseSignature(value);
  if (!sig) throw new WebhookRefusal('forged', MALFORMED_SIGNATURE);
  const values = signedValues(req);
  const v2 = anyMatch(() => Buffer.from(signRawV2(secret, sig.t, values, req.body), 'hex'), sig.v2);
  const v1 = anyMatch(() => Buffer.from(signRaw(secret, sig.t, req.body), 'hex'), sig.v1);
  if (!v2 && !v1) throw new WebhookRefusal('forged', `${SIGNATURE_HEADER} does not match the body`);
  const unsigned = v2 ? [] : SIGNED_HEADERS.filter((name) => values[name] !== undefined && values[name].trim() !== '');
  if (unsigned.length > 0) {
    throw new WebhookRefusal('forged', `${unsigned.join(', ')} not covered by the signature: sign with v2 (the body and these headers)`);
  }
  // Checked after the signature, so an attacker learns nothing about the window from a forgery.
  if (Math.abs(nowMs / 1000 - sig.t) > maxAgeS) {
    throw new WebhookRefusal('replayed', `signature timestamp ${sig.t} is more than ${maxAgeS} s from now`);
  }
}

function verifyBearer(req: Pick<PushRequest, 'headers'>, keys: readonly string[]): void {
  const value = header(req, 'authorization');
  const m = value === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(value);
  if (!m) throw new WebhookRefusal('unsigned', 'no Authorization: Bearer <key> header');
  let match = false;
  for (const key of keys) match = sameSecret(m[1]!, key) || match;
  if (!match) throw new WebhookRefusal('forged', 'the bearer key is not one of bearer_keys');
}

/**
 * What the headers alone can prove, before the body is read: a bearer key, or that an HMAC
 * signature header is there and well-formed (its match against the body is checked in verifyRaw).
 */
export function authorizeRaw(req: Pick<PushRequest, 'headers'>, config: RawConfig): void {
  if (config.bearer_keys !== undefined && config.hmac_secret === undefined) return verifyBearer(req, config.bearer_keys);
  if (config.hmac_secret === undefined) return;
  const value = header(req, SIGNATURE_HEADER);
  if (value === undefined || value.trim() === '') throw new WebhookRefusal('unsigned', `no ${SIGNATURE_HEADER} header`);
  if (!parseSignature(value)) throw new WebhookRefusal('forged', MALFORMED_SIGNATURE);
}

export function verifyRaw(req: PushRequest, config: RawConfig, ctx: VerifyContext): void {
  if (config.hmac_secret !== undefined) verifyHmac(req, config.hmac_secret, config.max_age_s, ctx.now());
  else if (config.bearer_keys !== undefined) verifyBearer(req, config.bearer_keys);
  else throw new WebhookRefusal('unavailable', 'the endpoint has neither hmac_secret nor bearer_keys');
}
