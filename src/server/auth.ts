/**
 * Admin API keys: `Authorization: Bearer <key>`. Keys are compared as SHA-256 digests with
 * timingSafeEqual, against every configured key without an early exit, so neither the
 * key's content nor its length nor which key matched shows in the timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { httpError } from './errors.js';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export interface KeyChecker {
  /** False when no key is configured: the admin API is disabled. */
  readonly enabled: boolean;
  matches(candidate: string): boolean;
}

export function keyChecker(keys: readonly string[]): KeyChecker {
  const digests = keys.map(digest);
  return {
    enabled: digests.length > 0,
    matches(candidate: string): boolean {
      const d = digest(candidate);
      let ok = false;
      for (const k of digests) ok = timingSafeEqual(k, d) || ok;
      return ok;
    },
  };
}

/** The bearer token of the request, or undefined. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(h);
  return m ? m[1] : undefined;
}

/**
 * An onRequest hook: runs before the body is read, so an unauthenticated client cannot
 * make the server buffer a large upload.
 */
export function requireKey(checker: KeyChecker) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!checker.enabled) {
      throw httpError(
        'MAILGATE_ERR_SERVER_ADMIN_DISABLED',
        'The admin API is disabled: no keys are configured. Set server.api_keys in mailgate.yaml (at least 16 characters each) to enable it.',
      );
    }
    const token = bearerToken(request);
    if (token === undefined) {
      throw httpError('MAILGATE_ERR_SERVER_UNAUTHORIZED', 'Send an admin API key as `Authorization: Bearer <key>`.');
    }
    if (!checker.matches(token)) {
      request.log.warn({ ip: request.ip, url: request.url.split('?')[0] }, 'admin API request with a wrong key');
      throw httpError('MAILGATE_ERR_SERVER_UNAUTHORIZED', 'The API key is not valid.');
    }
  };
}
