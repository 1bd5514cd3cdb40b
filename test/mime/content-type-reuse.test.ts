/**
 * Content-Type values that parts repeat are read once and their reading shared between parts:
 * a shared reading must give every message what reading the value afresh gives, and a value
 * whose reading can warn (an RFC 2231 or RFC 2047 parameter) must warn for every message.
 */
import { describe, expect, it } from 'vitest';
import { parseMessage } from '../../src/mime/parse.js';

const mixed = (n: number, type: string) =>
  Buffer.from(
    `From: a@example.com\r\nSubject: ${n}\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b${n}"\r\n\r\n` +
      `--b${n}\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\ncaf\xe9 ${n}\r\n` +
      `--b${n}\r\nContent-Type: ${type}\r\nContent-Disposition: attachment\r\n\r\nxyz\r\n--b${n}--\r\n`,
    'latin1',
  );

describe('repeated Content-Type values', () => {
  it('read alike in every message that repeats them', () => {
    for (let n = 0; n < 3; n++) {
      const parsed = parseMessage(mixed(n, 'application/pdf; name="report.pdf"'));
      expect(parsed.text).toBe(`café ${n}`);
      expect(parsed.attachments).toEqual([{ name: 'report.pdf', size: 3, content_type: 'application/pdf', inline: false }]);
      expect(parsed.warnings).toEqual([]);
    }
  });

  it('warn for every message when their parameters carry an unknown charset', () => {
    for (const type of [`application/pdf; name*=x-unknown''r%E9sum%E9.pdf`, 'application/pdf; name="=?x-unknown?Q?r=E9sum=E9?=.pdf"'])
      for (let n = 0; n < 3; n++) {
        const parsed = parseMessage(mixed(n, type));
        expect(parsed.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_CHARSET_FALLBACK']);
        expect(parsed.attachments[0]!.name).toMatch(/^r.sum.\.pdf$/);
      }
  });
});
