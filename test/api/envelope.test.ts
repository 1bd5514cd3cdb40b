import { describe, expect, it } from 'vitest';
import { readEnvelope } from '../../src/api/errors.js';

const now = Date.parse('2026-01-01T00:00:00Z');

describe('readEnvelope', () => {
  it('accepts a 2xx with status ok', () => {
    const r = readEnvelope(200, '{"status":"ok","new":1}', null, now);
    expect(r).toEqual({ ok: true, body: { status: 'ok', new: 1 } });
  });

  const failures: Array<[string, number, string, string | null, Record<string, unknown>]> = [
    [
      'API error envelope 422',
      422,
      '{"status":"error","message":"The value \'x\' is not a valid transform tag."}',
      null,
      { code: 'MAILGATE_ERR_API_UNPROCESSABLE', status: 422, apiMessage: "The value 'x' is not a valid transform tag." },
    ],
    ['400 envelope', 400, '{"status":"error","message":"bad"}', null, { code: 'MAILGATE_ERR_API_BAD_REQUEST', apiMessage: 'bad' }],
    ['401', 401, '{"status":"error","message":"no"}', null, { code: 'MAILGATE_ERR_API_UNAUTHORIZED' }],
    ['403', 403, '', null, { code: 'MAILGATE_ERR_API_FORBIDDEN', bodySnippet: '' }],
    ['404', 404, '{"status":"error","message":"404 Not Found"}', null, { code: 'MAILGATE_ERR_API_NOT_FOUND' }],
    ['408', 408, '', null, { code: 'MAILGATE_ERR_API_TIMEOUT' }],
    ['409', 409, '{"status":"error","message":"conflict"}', null, { code: 'MAILGATE_ERR_API_CONFLICT' }],
    [
      '429 with Retry-After seconds',
      429,
      '{"status":"error","message":"slow down"}',
      '3',
      { code: 'MAILGATE_ERR_API_RATE_LIMITED', retryAfterMs: 3000 },
    ],
    [
      '503 HTML page from a proxy',
      503,
      '<html><body><h1>503 Service Unavailable</h1>\n<p>cloudflare</p></body></html>',
      'Thu, 01 Jan 2026 00:00:02 GMT',
      {
        code: 'MAILGATE_ERR_API_SERVER',
        apiMessage: undefined,
        retryAfterMs: 2000,
        bodySnippet: '<html><body><h1>503 Service Unavailable</h1> <p>cloudflare</p></body></html>',
      },
    ],
    ['502 empty body', 502, '', null, { code: 'MAILGATE_ERR_API_SERVER', bodySnippet: '' }],
    ['413 from a proxy', 413, '<html>too large</html>', null, { code: 'MAILGATE_ERR_API_HTTP', status: 413 }],
    [
      '200 with status error',
      200,
      '{"status":"error","message":"odd"}',
      null,
      { code: 'MAILGATE_ERR_API_BAD_RESPONSE', status: 200, apiMessage: 'odd' },
    ],
    ['200 with HTML', 200, '<html>login</html>', null, { code: 'MAILGATE_ERR_API_BAD_RESPONSE', bodySnippet: '<html>login</html>' }],
    ['200 empty', 200, '', null, { code: 'MAILGATE_ERR_API_BAD_RESPONSE' }],
    ['200 JSON array', 200, '[]', null, { code: 'MAILGATE_ERR_API_BAD_RESPONSE' }],
  ];
  it.each(failures)('%s', (_name, status, body, retryAfter, expected) => {
    const r = readEnvelope(status, body, retryAfter, now);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject(expected);
  });

  it('keeps a snippet of long HTML bodies short', () => {
    const r = readEnvelope(500, `<html>${'x'.repeat(10_000)}</html>`, null, now);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.message.length).toBeLessThan(300);
      expect(r.error.message).toContain('(non-JSON body) <html>xxx');
    }
  });
});
