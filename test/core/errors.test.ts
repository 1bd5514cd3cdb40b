import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, GatewayError, WARNING_CODES, isGatewayError } from '../../src/errors.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const documented = new Set([...doc.matchAll(/`(MAILGATE_(?:ERR|WARN)_[A-Z0-9_]+)`/g)].map((m) => m[1]!));

describe('error catalogue', () => {
  it('documents every code in docs/errors.md and documents nothing that does not exist', () => {
    const codes = [...Object.keys(ERROR_CODES), ...Object.keys(WARNING_CODES)];
    expect(codes.filter((c) => !documented.has(c))).toEqual([]);
    expect([...documented].filter((c) => !codes.includes(c))).toEqual([]);
  });

  it('spells every code MAILGATE_ERR_<AREA>_<WHAT> or MAILGATE_WARN_<WHAT>', () => {
    for (const code of Object.keys(ERROR_CODES)) expect(code).toMatch(/^MAILGATE_ERR_[A-Z]+_[A-Z0-9_]+$/);
    for (const code of Object.keys(WARNING_CODES)) expect(code).toMatch(/^MAILGATE_WARN_[A-Z0-9_]+$/);
  });

  it('carries code, status and cause, and serialises without the stack', () => {
    const cause = new Error('socket hang up');
    const err = new GatewayError('MAILGATE_ERR_API_SERVER', 'API answered 503', { status: 503, cause });
    expect(isGatewayError(err, 'MAILGATE_ERR_API_SERVER')).toBe(true);
    expect(isGatewayError(err, 'MAILGATE_ERR_API_TIMEOUT')).toBe(false);
    expect(err.cause).toBe(cause);
    expect(JSON.parse(JSON.stringify(err))).toEqual({ code: 'MAILGATE_ERR_API_SERVER', message: 'API answered 503', status: 503 });
  });
});
