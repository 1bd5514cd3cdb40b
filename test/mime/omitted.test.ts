import { describe, it, expect } from 'vitest';
import { buildDocument } from '../../src/document/index.js';
import { parseMessage } from '../../src/mime/parse.js';

const PDF_B64 = Buffer.from('%PDF-1.4 some bytes of a document\n'.repeat(40)).toString('base64').replace(/.{76}/g, '$&\r\n');
const PDF_SIZE = '%PDF-1.4 some bytes of a document\n'.length * 40;

/** A multipart/mixed message whose second part has the given MIME header lines and content. */
function message(partHeader: string[], content: string, topHeader: string[] = []): Buffer {
  return Buffer.from(
    [
      'From: a@example.com',
      'Subject: report',
      ...topHeader,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      'see attached',
      '--b1',
      ...partHeader,
      '',
      content,
      '--b1--',
      '',
    ].join('\r\n'),
  );
}

const PDF_HEADER = [
  'Content-Type: application/pdf; name="r.pdf"',
  'Content-Disposition: attachment; filename="r.pdf"',
  'Content-Transfer-Encoding: base64',
];
const sizeOf = (raw: Buffer): number | undefined => parseMessage(raw).attachments[0]?.size;

describe('stub parts (X-Mailgate-Omitted-Size)', () => {
  it('takes the declared size of a stub part; the document equals the one from the full message', () => {
    const full = message(PDF_HEADER, PDF_B64);
    const stub = message([...PDF_HEADER, 'x-mailgate-omitted-size:  ' + String(PDF_SIZE) + ' '], '\r\n \t');
    expect(sizeOf(full)).toBe(PDF_SIZE);
    const p = parseMessage(stub);
    expect(p.attachments).toEqual([{ name: 'r.pdf', size: PDF_SIZE, content_type: 'application/pdf', inline: false }]);
    expect(p.text).toBe('see attached');
    expect(buildDocument(p).document).toEqual(buildDocument(parseMessage(full)).document);
    expect(JSON.stringify(buildDocument(p).document)).not.toMatch(/omitted-size/i);
  });

  it('ignores the field in the top-level header of the message', () => {
    const raw = Buffer.from(
      'From: a@example.com\r\nX-Mailgate-Omitted-Size: 999\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment\r\n\r\n',
    );
    expect(sizeOf(raw)).toBe(0);
  });

  it('ignores the field when it appears twice', () => {
    expect(sizeOf(message([...PDF_HEADER, 'X-Mailgate-Omitted-Size: 5', 'X-Mailgate-Omitted-Size: 5'], ''))).toBe(0);
  });

  it('ignores the field when the part has content', () => {
    expect(sizeOf(message([...PDF_HEADER, 'X-Mailgate-Omitted-Size: 5'], PDF_B64))).toBe(PDF_SIZE);
    expect(sizeOf(message([...PDF_HEADER, 'X-Mailgate-Omitted-Size: 5'], ' \r\nAAAA'))).toBe(3);
  });

  it('ignores a value that is not 1 to 15 digits', () => {
    for (const bad of ['', '-5', '5.0', '0x10', '1 2', '1234567890123456', '+5']) {
      expect(sizeOf(message([...PDF_HEADER, `X-Mailgate-Omitted-Size: ${bad}`], ''))).toBe(0);
    }
    expect(sizeOf(message([...PDF_HEADER, 'X-Mailgate-Omitted-Size: 123456789012345'], ''))).toBe(123456789012345);
  });

  it('ignores the field on multipart and message parts', () => {
    const nested = ['Content-Type: multipart/mixed; boundary="b2"', 'X-Mailgate-Omitted-Size: 77'];
    const inner = ['--b2', ...PDF_HEADER, '', PDF_B64, '--b2--'].join('\r\n');
    expect(sizeOf(message(nested, inner))).toBe(PDF_SIZE);
    const rfc822 = ['Content-Type: message/rfc822', 'X-Mailgate-Omitted-Size: 77'];
    expect(sizeOf(message(rfc822, ''))).toBe(0);
  });
});
