/** Small request helpers the providers share: headers, constant-time compares, basic auth, JSON bodies. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { PushRequest } from '../../src/pipeline/types.js';
import { WebhookRefusal, type RefusalKind } from './provider.js';
import type { BasicAuth } from './shared-config.js';

export function refuse(kind: RefusalKind, message: string): never {
  throw new WebhookRefusal(kind, message);
}

/** The first value of a header (names are lower-case in PushRequest). */
export function header(req: Pick<PushRequest, 'headers'>, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `type/subtype` of the Content-Type, lower-case, without parameters ('' when absent). */
export function mediaType(req: PushRequest): string {
  return (header(req, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Constant-time equality of two secrets of any length: both sides are hashed first, so neither
 * the content nor the length of the expected value leaks through timing.
 */
export function safeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** Checks HTTP basic auth: missing → `unsigned`, wrong → `forged`. */
export function checkBasicAuth(req: Pick<PushRequest, 'headers'>, auth: BasicAuth): void {
  const value = header(req, 'authorization');
  const m = value === undefined ? null : /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(value);
  if (!m) refuse('unsigned', 'no HTTP basic auth credentials');
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon === -1 ? decoded : decoded.slice(0, colon);
  const pass = colon === -1 ? '' : decoded.slice(colon + 1);
  // Both compared, always, so a right user with a wrong password takes as long as anything else.
  const ok = [safeEqual(user, auth.user), safeEqual(pass, auth.pass)];
  if (!ok[0] || !ok[1]) refuse('forged', 'HTTP basic auth credentials do not match');
}

export function basicAuthHeader(auth: BasicAuth): string {
  return `Basic ${Buffer.from(`${auth.user}:${auth.pass}`, 'utf8').toString('base64')}`;
}

/** The body as JSON; anything unreadable is `malformed`. */
export function jsonBody(req: PushRequest): unknown {
  try {
    return JSON.parse(req.body.toString('utf8'));
  } catch {
    return refuse('malformed', 'the body is not JSON');
  }
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A number from a provider's string or number field, when it is one. */
export function num(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/** Strict base64 (whitespace allowed between groups): Buffer.from silently skips junk, which would hide a broken payload. */
export function decodeBase64(text: string, what: string): Buffer {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) refuse('malformed', `${what} is not base64`);
  return Buffer.from(compact, 'base64');
}

/**
 * The bytes of a message a provider sent as a JSON string. JSON text is UTF-8 (RFC 8259), so
 * re-encoding the decoded string as UTF-8 gives back the bytes the provider put on the wire;
 * 8-bit bytes the provider had already replaced or escaped as lone surrogates cannot be restored.
 */
export const jsonStringBytes = (s: string): Buffer => Buffer.from(s, 'utf8');
