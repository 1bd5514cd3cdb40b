import { describe, expect, it } from 'vitest';
import { ApiError, codeForStatus } from '../../src/api/errors.js';
import {
  DEFAULT_RETRY_POLICY,
  decideRetry,
  delayFor,
  isRetryable,
  parseRetryAfter,
  resolveRetryPolicy,
  type RetryPolicy,
} from '../../src/api/retry.js';
import { GatewayError } from '../../src/errors.js';
import { ApiSchema } from '../../src/config/schema.js';

const httpError = (status: number, retryAfterMs?: number): ApiError =>
  new ApiError(codeForStatus(status), `status ${status}`, retryAfterMs === undefined ? { status } : { status, retryAfterMs });

const sysError = (code: string): Error => Object.assign(new Error(code), { code });

describe('isRetryable', () => {
  const table: Array<[string, unknown, boolean]> = [
    ['network error (ApiError)', new ApiError('MAILGATE_ERR_API_NETWORK', 'reset'), true],
    ['deadline (ApiError)', new ApiError('MAILGATE_ERR_API_TIMEOUT', 'late'), true],
    ['bad response on 200 (processed: not retried)', new ApiError('MAILGATE_ERR_API_BAD_RESPONSE', 'html', { status: 200 }), false],
    ['408', httpError(408), true],
    ['409', httpError(409), true],
    ['429', httpError(429), true],
    ['500', httpError(500), true],
    ['502', httpError(502), true],
    ['503', httpError(503), true],
    ['599', httpError(599), true],
    ['400', httpError(400), false],
    ['401', httpError(401), false],
    ['403', httpError(403), false],
    ['404', httpError(404), false],
    ['413', httpError(413), false],
    ['422', httpError(422), false],
    ['418 (unexpected)', httpError(418), false],
    [
      '429 after the retries ran out (the code stays; the error is transient)',
      new ApiError('MAILGATE_ERR_API_RATE_LIMITED', 'x (gave up after 4 attempts)', { status: 429, exhausted: 'attempts' }),
      true,
    ],
    ['aborted by the caller', new ApiError('MAILGATE_ERR_API_ABORTED', 'stop'), false],
    ['other gateway error', new GatewayError('MAILGATE_ERR_CONFIG_INVALID', 'x'), false],
    ['raw ECONNRESET', sysError('ECONNRESET'), true],
    ['raw ECONNREFUSED', sysError('ECONNREFUSED'), true],
    ['raw UND_ERR_SOCKET', sysError('UND_ERR_SOCKET'), true],
    ['fetch failed wrapping a reset', new TypeError('fetch failed', { cause: sysError('ECONNRESET') }), true],
    ['fetch failed wrapping nothing known', new TypeError('fetch failed', { cause: new Error('?') }), false],
    ['TimeoutError DOMException', new DOMException('t', 'TimeoutError'), true],
    ['AbortError DOMException', new DOMException('a', 'AbortError'), false],
    ['plain TypeError (a bug)', new TypeError('x is undefined'), false],
    ['a string', 'boom', false],
    ['undefined', undefined, false],
  ];
  it.each(table)('%s -> %s', (_name, err, expected) => {
    expect(isRetryable(err)).toBe(expected);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const table: Array<[string | null | undefined, number | undefined]> = [
    [null, undefined],
    [undefined, undefined],
    ['', undefined],
    ['0', 0],
    ['7', 7000],
    [' 120 ', 120_000],
    ['-3', undefined],
    ['1.5', undefined],
    ['soon', undefined],
    ['Thu, 01 Jan 2026 00:00:30 GMT', 30_000],
    ['Wed, 31 Dec 2025 23:59:00 GMT', 0], // in the past: no wait
  ];
  it.each(table)('%j -> %j', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('delayFor (jitter around the official schedule, Retry-After as a floor)', () => {
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    baseDelayMs: 1000,
    factor: 2,
    maxDelayMs: 5000,
    jitter: 0.5,
    maxRetryAfterMs: 30_000,
  };
  const table: Array<[string, number, unknown, number, number]> = [
    // name, attempt, error, random, expected
    ['1st retry, random 0: the floor, half the schedule', 1, httpError(503), 0, 500],
    ['1st retry, random 0.5: the schedule', 1, httpError(503), 0.5, 1000],
    ['2nd retry, random 0.5', 2, httpError(503), 0.5, 2000],
    ['3rd retry, random 0.999', 3, httpError(503), 0.999, 5996],
    ['capped by maxDelayMs before jitter', 10, httpError(503), 0.5, 5000],
    ['Retry-After above the backoff wins', 1, httpError(429, 7000), 0.5, 7000],
    ['backoff above Retry-After wins', 4, httpError(429, 100), 0.9, 7000],
    ['Retry-After capped by maxRetryAfterMs', 1, httpError(429, 3_600_000), 0, 30_000],
    ['Retry-After 0 keeps the floor', 1, httpError(429, 0), 0, 500],
  ];
  it.each(table)('%s', (_name, attempt, err, random, expected) => {
    expect(delayFor(attempt, err, policy, () => random)).toBe(expected);
  });

  it('stays within [d/2, 3d/2) of the scheduled d for any random in [0, 1); never 0', () => {
    for (let attempt = 1; attempt <= 8; attempt++) {
      const d = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      for (const r of [0, 0.25, 0.999999]) {
        const wait = delayFor(attempt, httpError(500), policy, () => r);
        expect(wait).toBeGreaterThanOrEqual(d / 2);
        expect(wait).toBeLessThan(1.5 * d);
      }
    }
  });

  it('the defaults wait 2 s, 4 s, 8 s, 16 s, 32 s on average, and never less than half', () => {
    const waits = (r: number) => [1, 2, 3, 4, 5].map((k) => delayFor(k, httpError(503), DEFAULT_RETRY_POLICY, () => r));
    expect(waits(0.5)).toEqual([2000, 4000, 8000, 16_000, 32_000]);
    expect(waits(0)).toEqual([1000, 2000, 4000, 8000, 16_000]);
    expect(delayFor(1, httpError(503), { ...DEFAULT_RETRY_POLICY, jitter: 0 }, () => 0.9)).toBe(2000);
  });

  it('by default a long Retry-After is honoured in full (only the budget limits it)', () => {
    expect(delayFor(1, httpError(429, 300_000), DEFAULT_RETRY_POLICY, () => 0.5)).toBe(300_000);
  });
});

describe('decideRetry', () => {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 3, baseDelayMs: 1000, budgetMs: 10_000 };
  const half = (): number => 0.5;
  const table: Array<[string, number, unknown, number, ReturnType<typeof decideRetry>]> = [
    ['retryable, attempts left', 1, httpError(500), 0, { retry: true, delayMs: 1000 }],
    ['second failure', 2, httpError(500), 0, { retry: true, delayMs: 2000 }],
    ['attempts used up', 3, httpError(500), 0, { retry: false, reason: 'attempts' }],
    ['not retryable', 1, httpError(422), 0, { retry: false, reason: 'not-retryable' }],
    ['wait would pass the budget', 1, httpError(500), 9_600, { retry: false, reason: 'budget' }],
    ['wait would end exactly at the budget: no time left to try', 1, httpError(500), 9_000, { retry: false, reason: 'budget' }],
    ['Retry-After past the budget', 1, httpError(429, 20_000), 0, { retry: false, reason: 'budget' }],
    ['Retry-After within the budget', 1, httpError(429, 8_000), 0, { retry: true, delayMs: 8_000 }],
  ];
  it.each(table)('%s', (_name, attempt, err, elapsed, expected) => {
    expect(decideRetry(attempt, err, elapsed, policy, half)).toEqual(expected);
  });

  it('a Retry-After beyond 120 s is waited when the budget allows it', () => {
    expect(decideRetry(1, httpError(429, 300_000), 0, DEFAULT_RETRY_POLICY, half)).toEqual({ retry: true, delayMs: 300_000 });
    expect(decideRetry(1, httpError(429, 300_000), 300_000, DEFAULT_RETRY_POLICY, half)).toEqual({ retry: false, reason: 'budget' });
  });

  it('maxAttempts 1 never retries', () => {
    expect(decideRetry(1, httpError(503), 0, { ...policy, maxAttempts: 1 })).toEqual({ retry: false, reason: 'attempts' });
  });
});

describe('resolveRetryPolicy', () => {
  it('defaults: 6 attempts, 2 s base, factor 2, with ±50 % jitter and no Retry-After clamp', () => {
    expect(resolveRetryPolicy()).toEqual(DEFAULT_RETRY_POLICY);
    expect(DEFAULT_RETRY_POLICY).toMatchObject({
      maxAttempts: 6,
      baseDelayMs: 2000,
      factor: 2,
      jitter: 0.5,
      maxRetryAfterMs: Number.POSITIVE_INFINITY,
      budgetMs: 600_000,
    });
  });
  it('the api.retry defaults of the configuration are these: a library client retries as serve does', () => {
    const d = DEFAULT_RETRY_POLICY;
    expect(ApiSchema.parse({}).retry).toEqual({
      max_attempts: d.maxAttempts,
      base_delay_ms: d.baseDelayMs,
      max_delay_ms: d.maxDelayMs,
      budget_ms: d.budgetMs,
    });
  });
  it('takes tiny values for tests, and 0 means 0', () => {
    expect(resolveRetryPolicy({ baseDelayMs: 0, maxDelayMs: 1 })).toMatchObject({ baseDelayMs: 0, maxDelayMs: 1 });
  });
  it.each([
    [{ maxAttempts: 0 }],
    [{ maxAttempts: 1.5 }],
    [{ baseDelayMs: -1 }],
    [{ factor: 0.5 }],
    [{ budgetMs: Number.NaN }],
    [{ maxDelayMs: Infinity }],
    [{ budgetMs: -1 }],
    [{ jitter: -0.1 }],
    [{ jitter: 1.5 }],
    [{ maxRetryAfterMs: Number.NaN }],
  ])('refuses %j with a config code', (bad) => {
    expect(() => resolveRetryPolicy(bad)).toThrowError(expect.objectContaining({ code: 'MAILGATE_ERR_CONFIG_INVALID' }) as Error);
  });
});
