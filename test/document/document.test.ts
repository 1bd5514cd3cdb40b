import { describe, it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { isGatewayError } from '../../src/errors.js';
import { buildDocument, commentIdFor } from '../../src/document/index.js';
import { fitFields } from '../../src/document/headers.js';
import { truncateField, truncateHtml, truncateText } from '../../src/document/truncate.js';
import { parseHeaderBlock } from '../../src/mime/headers.js';
import { parseMessage } from '../../src/mime/parse.js';
import type { ParsedMessage } from '../../src/mime/types.js';
import { RawEmailDocument } from '../../src/model/index.js';
import { buildComment } from '../../src/preview/comment.js';
import { MAX_HTML_CHARS, MAX_RAW_HEADER_CHARS, MAX_TEXT_CHARS } from '../../src/limits.js';

const parse = (s: string): ParsedMessage => parseMessage(Buffer.from(s, 'utf8'));
const codes = (r: { warnings: Array<{ code: string }> }): string[] => r.warnings.map((w) => w.code);
const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');

function parsedWith(fields: string, extra: Partial<ParsedMessage> = {}): ParsedMessage {
  return { headerBlock: fields, headers: parseHeaderBlock(fields), attachments: [], size: 0, warnings: [], ...extra };
}

describe('headers', () => {
  it('sends raw headers without the MIME structure fields, folded lines kept', () => {
    const p = parse(
      'From: a@b\nMIME-Version: 1.0\nContent-Type: multipart/mixed;\n boundary=x\nContent-Transfer-Encoding: 7bit\nTo: c@d,\n e@f\nMessage-ID: <1@x>\n\n--x--',
    );
    expect(buildDocument(p).document.raw_email.headers).toEqual({ raw: 'From: a@b\nTo: c@d,\n e@f\nMessage-ID: <1@x>' });
  });

  it('drops Content-Length (mbox) with its folded lines, like the other MIME structure fields', () => {
    const p = parse('From: a@b\nContent-Length: 12\ncontent-length:\n 34\nSubject: s\n\nhello world\n');
    expect(buildDocument(p).document.raw_email.headers).toEqual({ raw: 'From: a@b\nSubject: s' });
    expect(buildDocument(p, { headers: 'parsed' }).document.raw_email.headers).toEqual({ parsed: { From: 'a@b', Subject: 's' } });
  });

  it('sends parsed headers only when asked, unique and ASCII', () => {
    const unique = parse('From: a@b\nSubject: s\nContent-Type: text/plain\n\nx');
    expect(buildDocument(unique, { headers: 'parsed' }).document.raw_email.headers).toEqual({ parsed: { From: 'a@b', Subject: 's' } });
    expect(buildDocument(unique).document.raw_email.headers).toEqual({ raw: 'From: a@b\nSubject: s' });
    const repeated = parse('Received: 1\nreceived: 2\nSubject: s\n\nx');
    expect(buildDocument(repeated, { headers: 'parsed' }).document.raw_email.headers).toHaveProperty('raw');
    const nonAscii = parsedWith('Subject: s');
    nonAscii.headers.push({ name: 'X-Grüße', key: 'x-grüße', value: '1', raw: 'X-Grüße: 1' });
    expect(buildDocument(nonAscii, { headers: 'parsed' }).document.raw_email.headers).toHaveProperty('raw');
  });

  it('decodes encoded-words in parsed values, quoting decoded names in address fields (parsed-encoded-words regression)', () => {
    const p = parse(
      'From: =?utf-8?q?Doe=2C_John?= <j@x.com>\nTo: =?utf-8?q?a=22b?= <a@x>, (c) c@x\nSubject: =?utf-8?q?caf=C3=A9?=\nX-Note: =?x-bogus?q?f=FCr?=\nMessage-ID: <m@x>\n\nx',
    );
    const r = buildDocument(p, { headers: 'parsed' });
    expect(r.document.raw_email.headers).toEqual({
      parsed: { From: '"Doe, John" <j@x.com>', To: '"a\\"b" <a@x>, c <c@x>', Subject: 'café', 'X-Note': 'für', 'Message-ID': '<m@x>' },
    });
    expect(codes(r)).toEqual(['MAILGATE_WARN_CHARSET_FALLBACK']);
    // The comment built from the parsed document reads the same people and subject as from raw.
    const fromParsed = buildComment(r.document).comment.messages[0];
    const fromRaw = buildComment(buildDocument(p).document).comment.messages[0];
    expect(fromParsed).toEqual(fromRaw);
    expect(fromParsed!.from).toBe('Doe, John <j@x.com>');
  });

  it('drops the top-level entity headers when that entity is not the body sent (attachment-only-disposition regression)', () => {
    const entity =
      'Content-Disposition: attachment; filename="scan.pdf"\nContent-Description: Scan\nContent-ID: <s@x>\nContent-Location: scan.pdf\nContent-MD5: AAAA';
    const single = parse(`Subject: s\n${entity}\nContent-Type: application/pdf\nContent-Transfer-Encoding: base64\n\nAAAA\n`);
    expect(single.rootIsBody).toBe(false);
    expect(buildDocument(single).document.raw_email.headers).toEqual({ raw: 'Subject: s' });
    const multi = parse(`Subject: s\nContent-ID: <m@x>\nContent-Type: multipart/mixed; boundary=b\n\n--b\n\nhi\n--b--\n`);
    expect(buildDocument(multi).document.raw_email.headers).toEqual({ raw: 'Subject: s' });
    // A single text part is the body: what describes it stays (Content-MD5 aside, the body sent is decoded).
    const text = parse(
      'Subject: s\nContent-Disposition: inline\nContent-Description: note\nContent-MD5: AAAA\nContent-Type: text/plain\n\nhi\n',
    );
    expect(text.rootIsBody).toBe(true);
    expect(buildDocument(text).document.raw_email.headers).toEqual({
      raw: 'Subject: s\nContent-Disposition: inline\nContent-Description: note',
    });
    const textAttachment = parse('Subject: s\nContent-Disposition: attachment; filename=a.txt\nContent-Type: text/plain\n\nhi\n');
    expect(buildDocument(textAttachment).document.raw_email.headers).toEqual({ raw: 'Subject: s' });
  });

  it('cuts an oversized block by whole fields, keeping the fields the service reads', () => {
    const big = Array.from({ length: 700 }, (_, i) => `Received: from host${i} ${'r'.repeat(90)}`).join('\n');
    const p = parsedWith(`${big}\nFrom: a@b\nSubject: kept\nMessage-ID: <m@x>\nX-Last: dropped`, { text: 't' });
    const r = buildDocument(p);
    const raw = (r.document.raw_email.headers as { raw: string }).raw;
    expect(raw.length).toBeLessThanOrEqual(MAX_RAW_HEADER_CHARS);
    expect(raw).toContain('From: a@b\nSubject: kept\nMessage-ID: <m@x>');
    expect(raw).not.toContain('X-Last');
    expect(
      raw
        .split('\n')
        .every((l) => l.startsWith('Received: from host') || l === 'From: a@b' || l === 'Subject: kept' || l === 'Message-ID: <m@x>'),
    ).toBe(true);
    expect(codes(r)).toEqual(['MAILGATE_WARN_HEADERS_TRUNCATED']);
  });

  it('fitFields never splits a field and keeps the original order', () => {
    const fields = parseHeaderBlock('X-A: 12345\nSubject: s\nX-B: 1');
    expect(fitFields(fields, 100).kept).toHaveLength(3);
    expect(fitFields(fields, 12).kept.map((f) => f.name)).toEqual(['Subject']);
    expect(fitFields(fields, 21).kept.map((f) => f.name)).toEqual(['X-A', 'Subject']);
  });
});

describe('body', () => {
  const alt = parsedWith('Subject: s', { text: 'plain', html: '<p>rich</p>' });
  const htmlOnly = parsedWith('Subject: s', { html: '<p>only <i>html</i></p>' });

  it('auto: text when present, else html', () => {
    expect(buildDocument(alt).document.raw_email.body).toEqual({ plain: 'plain' });
    expect(buildDocument(htmlOnly).document.raw_email.body).toEqual({ html: '<p>only <i>html</i></p>' });
    expect(buildDocument(parsedWith('S: s', { text: ' \n', html: '<b>x</b>' })).document.raw_email.body).toEqual({ html: '<b>x</b>' });
  });

  it('plain: html converted when there is no text part', () => {
    expect(buildDocument(htmlOnly, { body: 'plain' }).document.raw_email.body).toEqual({ plain: 'only html' });
    expect(buildDocument(alt, { body: 'plain' }).document.raw_email.body).toEqual({ plain: 'plain' });
  });

  it('html: html when present, else text', () => {
    expect(buildDocument(alt, { body: 'html' }).document.raw_email.body).toEqual({ html: '<p>rich</p>' });
    expect(buildDocument(parsedWith('S: s', { text: 't' }), { body: 'html' }).document.raw_email.body).toEqual({ plain: 't' });
  });

  it('no body at all: an empty plain body and a warning', () => {
    const r = buildDocument(parsedWith('Message-ID: <x>'));
    expect(r.document.raw_email.body).toEqual({ plain: '' });
    expect(codes(r)).toEqual(['MAILGATE_WARN_NO_BODY']);
  });

  it('truncates long plain text at a line break with a warning', () => {
    const text = `${'word '.repeat(13_000)}\n${'z'.repeat(10_000)}`;
    const r = buildDocument(parsedWith('Message-ID: <x>', { text }));
    const plain = (r.document.raw_email.body as { plain: string }).plain;
    expect(plain.length).toBeLessThanOrEqual(MAX_TEXT_CHARS);
    expect(plain).toBe(text.slice(0, text.indexOf('\n')).trimEnd());
    expect(codes(r)).toEqual(['MAILGATE_WARN_BODY_TRUNCATED']);
  });

  it('truncation never splits a surrogate pair', () => {
    const text = '😀'.repeat(40_000);
    const cut = truncateText(text, MAX_TEXT_CHARS);
    expect(cut.length).toBe(MAX_TEXT_CHARS);
    expect(cut.endsWith('😀')).toBe(true);
    expect(truncateText(`a${text}`, MAX_TEXT_CHARS).length).toBe(MAX_TEXT_CHARS - 1);
  });

  it('truncates text without breaks hard, and at whitespace when there is some', () => {
    expect(truncateText('abcdefghij', 4)).toBe('abcd');
    expect(truncateText('ab cd efgh', 7)).toBe('ab cd');
  });

  it('truncates html before a dangling tag', () => {
    expect(truncateHtml('<p>abc</p><p class="x">def', 15)).toBe('<p>abc</p>');
    expect(truncateHtml('<p>abc</p>', MAX_HTML_CHARS)).toBe('<p>abc</p>');
  });
});

describe('attachments', () => {
  it('lists at most 128 with a warning, names and types cut to 256 characters keeping the extension', () => {
    const attachments = Array.from({ length: 130 }, (_, i) => ({
      name: `${'n'.repeat(i === 0 ? 300 : 3)}.pdf`,
      size: i,
      content_type: i === 1 ? `application/${'x'.repeat(300)}` : 'application/pdf',
      inline: false,
    }));
    const r = buildDocument(parsedWith('Message-ID: <x>', { text: 't', attachments }));
    const list = r.document.raw_email.attachments!;
    expect(list).toHaveLength(128);
    expect(list[0]!.name).toHaveLength(256);
    expect(list[0]!.name.endsWith('.pdf')).toBe(true);
    expect(list[1]!.content_type).toHaveLength(256);
    expect(list[5]).toEqual({ name: 'nnn.pdf', size: 5, content_type: 'application/pdf' });
    expect(codes(r)).toEqual(['MAILGATE_WARN_ATTACHMENTS_TRUNCATED']);
    expect(truncateField('x'.repeat(300), 256, true)).toHaveLength(256);
  });
});

describe('comment id', () => {
  it('is the hex of the Message-ID value as written, trimmed', () => {
    expect(commentIdFor(parsedWith('Message-ID:   <abc@example.com>  '))).toBe(hex('<abc@example.com>'));
    expect(commentIdFor(parsedWith('Message-Id: abc@example.com'))).toBe(hex('abc@example.com'));
    expect(commentIdFor(parsedWith('Message-ID: <folded@\n example.com>'))).toBe(hex('<folded@ example.com>'));
    expect(commentIdFor(parsedWith('Message-ID: <ü@x>'))).toBe(hex('<ü@x>'));
  });

  it('is the SHA-256 of header block and body when missing, with a warning', () => {
    const p = parsedWith('Subject: s', { text: 'body' });
    const expected = createHash('sha256').update('Subject: s\n\nbody').digest('hex');
    const r = buildDocument(p);
    expect(r.document.comment_id).toBe(expected);
    expect(codes(r)).toEqual(['MAILGATE_WARN_MESSAGE_ID_MISSING']);
    expect(commentIdFor(parsedWith('Message-ID:   ', { text: 'body' }))).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the SHA-256 when the hex would exceed 1024 characters, without a warning', () => {
    const exact = parsedWith(`Message-ID: <${'a'.repeat(510)}>`);
    expect(commentIdFor(exact)).toHaveLength(1024);
    const long = parsedWith(`Message-ID: <${'a'.repeat(511)}>`, { text: 't' });
    expect(commentIdFor(long)).toMatch(/^[0-9a-f]{64}$/);
    expect(buildDocument(long).warnings).toEqual([]);
  });

  it('an explicit id overrides; a non-hex explicit id is refused with a code', () => {
    expect(buildDocument(parsedWith('Message-ID: <x>'), { commentId: 'abc123' }).document.comment_id).toBe('abc123');
    try {
      buildDocument(parsedWith('Message-ID: <x>'), { commentId: 'XYZ' });
      expect.unreachable();
    } catch (err) {
      expect(isGatewayError(err, 'MAILGATE_ERR_DOCUMENT_INVALID')).toBe(true);
    }
  });
});

describe('user properties', () => {
  it('passes valid properties and drops invalid or empty ones with warnings', () => {
    const r = buildDocument(parsedWith('Message-ID: <x>', { text: 't' }), {
      userProperties: {
        'string:Mailbox': 'inbox',
        'number:Score': 1.5,
        'string:Blank': ' \t',
        'number:Inf': Infinity,
        nope: 'x',
        'string:has-dash': 'x',
        'string: lead': 'x',
        [`string:${'n'.repeat(33)}`]: 'x',
      },
    });
    expect(r.document.user_properties).toEqual({ 'string:Mailbox': 'inbox', 'number:Score': 1.5 });
    expect(codes(r)).toEqual(Array(6).fill('MAILGATE_WARN_PROPERTY_DROPPED'));
  });

  it('omits user_properties when none remain', () => {
    expect(buildDocument(parsedWith('Message-ID: <x>', { text: 't' }), { userProperties: { 'string:A': '' } }).document).not.toHaveProperty(
      'user_properties',
    );
  });
});

describe('schema', () => {
  it('every built document satisfies RawEmailDocument', () => {
    const p = parse(
      'From: a@b\nContent-Type: multipart/mixed; boundary=b\n\n--b\n\nhi\n--b\nContent-Type: image/png; name=a.png\n\nxx\n--b--',
    );
    const { document } = buildDocument(p, { userProperties: { 'string:X': 'y' } });
    expect(RawEmailDocument.parse(document)).toEqual(document);
  });
});
