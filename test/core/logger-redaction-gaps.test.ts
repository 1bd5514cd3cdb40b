/**
 * Log redaction gaps: OAuth parameters in query strings and form bodies, URL objects with
 * credentials, class instances with secret fields, and values nested deeper than the walk.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactDeep, redactString, REDACTED } from '../../src/logger.js';

function logged(write: (logger: ReturnType<typeof createLogger>) => void): string {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      cb();
    },
  });
  write(createLogger({ level: 'debug', destination }));
  return chunks.join('');
}

describe('log redaction', () => {
  it('OAuth and credential parameters in query strings and form bodies inside strings', () => {
    const form = 'grant_type=refresh_token&refresh_token=RT-SECRET&client_id=app&client_secret=CS-SECRET';
    expect(redactString(form)).toBe(`grant_type=refresh_token&refresh_token=${REDACTED}&client_id=app&client_secret=${REDACTED}`);
    expect(redactString('client_secret=CS-SECRET&x=1')).toBe(`client_secret=${REDACTED}&x=1`);
    const query = 'https://idp.example/cb?code=CODE-SECRET&state=s&id_token=IT-SECRET&access_token=AT-SECRET';
    expect(redactString(query)).toBe(`https://idp.example/cb?code=${REDACTED}&state=s&id_token=${REDACTED}&access_token=${REDACTED}`);
    expect(redactString('POST body: username=u&password=PW-SECRET; token=T-SECRET')).toBe(
      `POST body: username=u&password=${REDACTED}; token=${REDACTED}`,
    );
    const text = logged((l) => l.info({ body: form }, 'token request %s', query));
    for (const s of ['RT-SECRET', 'CS-SECRET', 'CODE-SECRET', 'IT-SECRET', 'AT-SECRET']) expect(text).not.toContain(s);
  });

  it('URL objects carrying credentials (user:pass@ and secret query parameters)', () => {
    const url = new URL('https://user:PASS-SECRET@api.example.com/v1?access_token=AT-SECRET&page=2');
    expect(redactDeep(url)).toBe(`https://user:${REDACTED}@api.example.com/v1?access_token=${REDACTED}&page=2`);
    const text = logged((l) => l.info({ url }, 'calling'));
    expect(text).not.toContain('PASS-SECRET');
    expect(text).not.toContain('AT-SECRET');
    expect(text).toContain('api.example.com');
  });

  it('class instances with a secret field: an Error subclass and a custom object', () => {
    class AuthError extends Error {
      password = 'PW-SECRET';
      token = 'TOKEN-SECRET';
    }
    class Credentials {
      user = 'support@example.com';
      password = 'PW2-SECRET';
      nested = { refreshToken: 'RT2-SECRET' };
    }
    expect(redactDeep(new Credentials())).toEqual({ user: 'support@example.com', password: REDACTED, nested: { refreshToken: REDACTED } });
    const text = logged((l) => {
      l.error({ err: new AuthError('login failed') }, 'auth');
      l.info({ creds: new Credentials() }, 'connecting');
      l.info({ wrapped: { cause: new AuthError('x') } }, 'nested error');
    });
    for (const s of ['PW-SECRET', 'TOKEN-SECRET', 'PW2-SECRET', 'RT2-SECRET']) expect(text).not.toContain(s);
    expect(text).toContain('support@example.com');
  });

  it('values nested deeper than 12 levels', () => {
    let deep: Record<string, unknown> = { password: 'DEEP-SECRET', url: 'postgres://u:DEEP-PW@db/x' };
    for (let i = 0; i < 30; i++) deep = { level: deep };
    const text = logged((l) => l.info({ deep }, 'deep'));
    expect(text).not.toContain('DEEP-SECRET');
    expect(text).not.toContain('DEEP-PW');
    expect(JSON.stringify(redactDeep(deep))).not.toContain('SECRET');
  });
});
