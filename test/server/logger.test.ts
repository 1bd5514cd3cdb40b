import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { createLogger, redactString, redactUrl, REDACTED } from '../../src/logger.js';

function capture() {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      cb();
    },
  });
  return {
    destination,
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const SECRETS = [
  'tok-SECRET-1',
  'pw-SECRET-2',
  'access-SECRET-3',
  'refresh-SECRET-4',
  'client-SECRET-5',
  'bearer-SECRET-6',
  'adminkey-SECRET-7',
  'pgpass-SECRET-8',
  'imap-SECRET-9',
  'query-SECRET-10',
];

describe('logger', () => {
  it('redacts secrets at any depth, in bindings, errors and message strings', () => {
    const out = capture();
    const logger = createLogger({ level: 'debug', destination: out.destination });
    const child = logger.child({ adapter: 'imap', account: 'support-inbox', auth: { user: 'support@example.com', pass: 'imap-SECRET-9' } });
    logger.info({ api: { url: 'https://api.example.com', token: 'tok-SECRET-1' } }, 'config loaded');
    logger.info(
      { config: { server: { api_keys: ['adminkey-SECRET-7'] }, store: 'postgres://mailgate:pgpass-SECRET-8@db:5432/mailgate' } },
      'starting',
    );
    child.warn(
      {
        oauth: { accessToken: 'access-SECRET-3', refresh_token: 'refresh-SECRET-4', clientSecret: 'client-SECRET-5' },
        password: 'pw-SECRET-2',
      },
      'token refreshed',
    );
    child.info({ req: { headers: { Authorization: 'Bearer bearer-SECRET-6', host: 'x' } } }, 'incoming');
    logger.info('store at %s', 'postgres://u:pgpass-SECRET-8@db/x?sslmode=require&password=query-SECRET-10');
    logger.error(
      { err: new GatewayError('MAILGATE_ERR_STORE_UNAVAILABLE', 'cannot reach postgres://u:pgpass-SECRET-8@db/x') },
      'store down',
    );
    logger.debug('sending Authorization: Bearer bearer-SECRET-6');
    child.child({ folder: 'INBOX', token: 'tok-SECRET-1' }).info('grandchild');

    const text = out.text();
    for (const s of SECRETS) expect(text).not.toContain(s);
    const lines = out.lines();
    expect(lines).toHaveLength(8);
    expect(lines[0]).toMatchObject({
      level: 'info',
      name: 'mailgate',
      msg: 'config loaded',
      api: { url: 'https://api.example.com', token: REDACTED },
    });
    expect(typeof lines[0]!['time']).toBe('string');
    expect(lines[1]).toMatchObject({
      config: { server: { api_keys: REDACTED }, store: `postgres://mailgate:${REDACTED}@db:5432/mailgate` },
    });
    expect(lines[2]).toMatchObject({
      adapter: 'imap',
      account: 'support-inbox',
      auth: { user: 'support@example.com', pass: REDACTED },
      password: REDACTED,
    });
    expect(lines[3]).toMatchObject({ req: { headers: { Authorization: REDACTED, host: 'x' } } });
    expect(lines[4]!['msg']).toBe(`store at postgres://u:${REDACTED}@db/x?sslmode=require&password=${REDACTED}`);
    expect(lines[5]).toMatchObject({ err: { code: 'MAILGATE_ERR_STORE_UNAVAILABLE', type: 'GatewayError' } });
    expect(String((lines[5]!['err'] as Record<string, unknown>)['message'])).toContain(`u:${REDACTED}@db`);
    expect(lines[6]!['msg']).toBe(`sending Authorization: Bearer ${REDACTED}`);
    expect(lines[7]).toMatchObject({
      adapter: 'imap',
      account: 'support-inbox',
      folder: 'INBOX',
      token: REDACTED,
      auth: { pass: REDACTED },
      msg: 'grandchild',
    });
  });

  it('redactUrl hides the userinfo password and secret query parameters only', () => {
    expect(redactUrl('postgres://mailgate:s3cr%40t@db.internal:5432/mailgate')).toBe(
      `postgres://mailgate:${REDACTED}@db.internal:5432/mailgate`,
    );
    expect(redactUrl('postgres://mailgate:p@ss@db/x')).toBe(`postgres://mailgate:${REDACTED}@db/x`);
    expect(redactUrl('postgres://db/x?user=a&password=b')).toBe(`postgres://db/x?user=a&password=${REDACTED}`);
    expect(redactUrl('postgres://onlyuser@db/x')).toBe('postgres://onlyuser@db/x');
    expect(redactUrl('sqlite:./data/mailgate.db')).toBe('sqlite:./data/mailgate.db');
    expect(redactUrl('https://api.example.com:8443/v1')).toBe('https://api.example.com:8443/v1');
    expect(redactString('a https://u:pw@h/p and http://x:y@z')).toBe(`a https://u:${REDACTED}@h/p and http://x:${REDACTED}@z`);
  });

  it('writes nothing when disabled or silent', () => {
    const out = capture();
    createLogger({ level: 'silent', destination: out.destination }).error('boom');
    createLogger(false).error('boom');
    expect(out.text()).toBe('');
  });
});
