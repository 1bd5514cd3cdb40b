/**
 * How the Gmail client reads an error answer: which answers are rate limits (429, and 403 with a
 * rate-limit reason — never any other 403), each lasting failure's code, and the wait a
 * rate-limit message names.
 */
import { describe, expect, it } from 'vitest';
import { codeFor, isRateLimited, retryAfterInMessage } from '../../adapters/gmail/client.js';

const body = (reason: string, message = 'x') => ({ error: { code: 0, message, errors: [{ reason }] } });

describe('gmail client: error answers', () => {
  it('tells rate limits from refusals', () => {
    expect(isRateLimited(429, undefined)).toBe(true);
    expect(isRateLimited(403, body('userRateLimitExceeded'))).toBe(true);
    expect(isRateLimited(403, body('rateLimitExceeded'))).toBe(true);
    expect(isRateLimited(403, body('insufficientPermissions'))).toBe(false);
    expect(isRateLimited(403, body('dailyLimitExceeded'))).toBe(false);
  });

  it('gives each lasting failure its own code', () => {
    expect(codeFor(401, undefined)).toBe('MAILGATE_ERR_GMAIL_UNAUTHORIZED');
    expect(codeFor(403, body('accessNotConfigured'))).toBe('MAILGATE_ERR_GMAIL_FORBIDDEN');
    expect(codeFor(400, body('failedPrecondition'))).toBe('MAILGATE_ERR_GMAIL_FORBIDDEN');
    expect(codeFor(404, body('notFound'))).toBe('MAILGATE_ERR_GMAIL_NOT_FOUND');
    expect(codeFor(403, body('userRateLimitExceeded'))).toBe('MAILGATE_ERR_GMAIL_RATE_LIMITED');
    expect(codeFor(503, undefined)).toBe('MAILGATE_ERR_GMAIL_UNAVAILABLE');
    expect(codeFor(400, body('invalidArgument'))).toBe('MAILGATE_ERR_GMAIL_RESPONSE');
  });

  it('reads the time in Gmail\'s "Retry after" message as a wait, clamped', () => {
    const at = new Date(Date.now() + 30_000).toISOString();
    const wait = retryAfterInMessage(body('rateLimitExceeded', `User-rate limit exceeded.  Retry after ${at}`))!;
    expect(wait).toBeGreaterThan(28_000);
    expect(wait).toBeLessThanOrEqual(30_000);
    expect(retryAfterInMessage(body('rateLimitExceeded', 'Retry after 2999-01-01T00:00:00Z'))).toBe(15 * 60_000);
    expect(retryAfterInMessage(body('rateLimitExceeded', 'User Rate Limit Exceeded'))).toBeUndefined();
  });
});
