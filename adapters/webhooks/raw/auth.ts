/**
 * Authentication of `raw` requests: a Stripe-style HMAC signature header with a timestamp
 * window, or a bearer key. Every comparison is constant-time.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { PushRequest } from '../../../src/pipeline/types.js';
import { WebhookRefusal, type VerifyContext } from '../provider.js';
import type { RawConfig } from '../config.js';

export const SIGNATURE_HEADER = 'x-mailgate-signature';
/** At most this many `v1=` entries are tried (key rotation needs two or three). */
const MAX_SIGNATURES = 8;
const HEX_SHA256_RE = /^[0-9a-f]{64}$/;

export function header(req: Pick<PushRequest, 'headers'>, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Hex HMAC-SHA256 of `<t>.<body>`. */
export function signRaw(secret: string, t: number, body: Buffer): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

/** Equal-length digests compared in constant time; neither length nor content leaks. */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

interface ParsedSignature {
  t: number;
  v1: string[];
}

function parseSignature(value: string): ParsedSignature | undefined {
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const val = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(val)) t = Number(val);
    else if (key === 'v1' && HEX_SHA256_RE.test(val.toLowerCase()) && v1.length < MAX_SIGNATURES) v1.push(val.toLowerCase());
  }
  return t === undefined || v1.length === 0 ? undefined : { t, v1 };
}

function verifyHmac(req: PushRequest, secret: string, maxAgeS: number, nowMs: number): void {
  const value = header(req, SIGNATURE_HEADER);
  if (value === undefined || value.trim() === '') throw new WebhookRefusal('unsigned', `no ${SIGNATURE_HEADER} header`);
  const sig = parseSignature(value);
  if (!sig) throw new WebhookRefusal('forged', `${SIGNATURE_HEADER} is not t=<unix seconds>,v1=<hex sha256>`);
  const expected = Buffer.from(signRaw(secret, sig.t, req.body), 'hex');
  // Every entry is compared (no early exit) so the time taken does not tell which one matched.
  let match = false;
  for (const v of sig.v1) match = timingSafeEqual(expected, Buffer.from(v, 'hex')) || match;
  if (!match) throw new WebhookRefusal('forged', `${SIGNATURE_HEADER} does not match the body`);
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
  if (!parseSignature(value)) throw new WebhookRefusal('forged', `${SIGNATURE_HEADER} is not t=<unix seconds>,v1=<hex sha256>`);
}

export function verifyRaw(req: PushRequest, config: RawConfig, ctx: VerifyContext): void {
  if (config.hmac_secret !== undefined) verifyHmac(req, config.hmac_secret, config.max_age_s, ctx.now());
  else if (config.bearer_keys !== undefined) verifyBearer(req, config.bearer_keys);
  else throw new WebhookRefusal('unavailable', 'the endpoint has neither hmac_secret nor bearer_keys');
}
