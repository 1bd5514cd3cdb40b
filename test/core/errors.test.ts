import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../adapters/config.js';
import { ERROR_CATALOGUE, ERROR_CODES, renderErrorDocs } from '../../src/error-catalogue.js';
import { CORE_ERRORS, GatewayError, WARNING_CODES, assembleCatalogue, defineErrors, isGatewayError } from '../../src/errors.js';

describe('error catalogue', () => {
  it('docs/errors.md is what the catalogue renders (run `npm run docs:errors` after changing a code)', () => {
    const onDisk = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    expect(onDisk).toBe(renderErrorDocs());
  });

  it("holds the core's codes and every kind's, each once", () => {
    expect(Object.keys(ERROR_CATALOGUE)).toEqual(Object.keys(errorCatalogue()));
    for (const code of Object.keys(CORE_ERRORS)) expect(ERROR_CATALOGUE[code]).toBe(CORE_ERRORS[code as keyof typeof CORE_ERRORS]);
    expect(ERROR_CATALOGUE['MAILGATE_ERR_IMAP_AUTH']).toBeDefined();
    expect(ERROR_CATALOGUE['MAILGATE_ERR_WEBHOOK_FORGED']?.http).toBe(403);
    expect(ERROR_CODES['MAILGATE_ERR_UPLOAD_TOO_LARGE']).toBe(ERROR_CATALOGUE['MAILGATE_ERR_UPLOAD_TOO_LARGE']?.message);
  });

  it('refuses a code that two owners declare', () => {
    const twice = defineErrors({ MAILGATE_ERR_STORE_UNAVAILABLE: { message: 'again' } });
    expect(() => assembleCatalogue([{ owner: 'adapters/test', errors: twice }])).toThrow(
      /MAILGATE_ERR_STORE_UNAVAILABLE of adapters\/test is already declared by core/,
    );
  });

  it('declares the answer of every push-intake refusal: 503 over HTTP, 451 over SMTP', () => {
    for (const code of ['MAILGATE_ERR_INTAKE_UNAVAILABLE', 'MAILGATE_ERR_INTAKE_OUTBOX_FULL'])
      expect(ERROR_CATALOGUE[code]).toMatchObject({ http: 503, smtp: 451 });
  });

  it('spells every code MAILGATE_ERR_<AREA>_<WHAT> or MAILGATE_WARN_<WHAT>, with statuses in range', () => {
    for (const [code, def] of Object.entries(ERROR_CATALOGUE)) {
      expect(code).toMatch(/^MAILGATE_ERR_[A-Z]+_[A-Z0-9_]+$/);
      if (def.http !== undefined) expect(def.http >= 400 && def.http <= 599).toBe(true);
      if (def.smtp !== undefined) expect(def.smtp >= 400 && def.smtp <= 599).toBe(true);
    }
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
