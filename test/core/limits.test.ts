import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { parseLimit } from '../../src/limits.js';

function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (isGatewayError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('accepted');
}

describe('parseLimit (configured limits: integers within bounds, 0 means 0)', () => {
  it('takes the value, or the fallback when the value is not set', () => {
    expect(parseLimit('batchSize', 7, 100)).toBe(7);
    expect(parseLimit('batchSize', undefined, 100)).toBe(100);
  });

  it('keeps 0 when 0 is allowed, and refuses it otherwise', () => {
    expect(parseLimit('maxMessageBytes', 0, 1_000, { min: 0 })).toBe(0);
    expect(refusal(() => parseLimit('size', 0, 4))).toEqual({
      code: 'MAILGATE_ERR_CONFIG_INVALID',
      message: 'size must be an integer 1..9007199254740991, got 0',
    });
  });

  it('refuses fractions, NaN, infinities and values out of bounds, naming the option', () => {
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, -1, 10_001]) {
      const { code, message } = refusal(() => parseLimit('pollMs', bad, 1, { max: 10_000 }));
      expect(code).toBe('MAILGATE_ERR_CONFIG_INVALID');
      expect(message).toMatch(/^pollMs must be an integer 1\.\.10000, got /);
    }
    expect(parseLimit('pollMs', 10_000, 1, { max: 10_000 })).toBe(10_000);
  });

  it("refuses a bad fallback too, and carries the caller's code when it has its own", () => {
    expect(refusal(() => parseLimit('window', undefined, 0)).code).toBe('MAILGATE_ERR_CONFIG_INVALID');
    const own = { min: 1024, code: 'MAILGATE_ERR_EMULATOR_OPTIONS_INVALID' } as const;
    expect(refusal(() => parseLimit('bodyLimit', 5, 1_000, own)).code).toBe('MAILGATE_ERR_EMULATOR_OPTIONS_INVALID');
  });

  it('with real: takes fractions, still refuses NaN, infinities and values out of bounds', () => {
    expect(parseLimit('retry.jitter', 0.5, 1, { min: 0, max: 1, real: true })).toBe(0.5);
    expect(parseLimit('connects per second', 0.25, 40, { min: Number.MIN_VALUE, real: true })).toBe(0.25);
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, -0.1, 1.5]) {
      expect(refusal(() => parseLimit('retry.jitter', bad, 1, { min: 0, max: 1, real: true })).message).toMatch(
        /^retry\.jitter must be a number 0\.\.1, got /,
      );
    }
    expect(refusal(() => parseLimit('connects per second', 0, 40, { min: Number.MIN_VALUE, real: true })).message).toBe(
      'connects per second must be a number > 0, got 0',
    );
  });
});
