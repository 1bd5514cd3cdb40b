import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { isGatewayError } from '../../src/errors.js';
import { MAX_MIME_PARTS } from '../../src/limits.js';
import { parseMessage } from '../../src/mime/parse.js';
import { decodeContent, decodedSize, transferEncoding } from '../../src/mime/transfer.js';

const msg = (s: string): Buffer => Buffer.from(s, 'utf8');
const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return isGatewayError(err) ? err.code : `not a GatewayError: ${String(err)}`;
  }
  return undefined;
};

describe('parseMessage: budgets and refusals', () => {
  it('refuses input over the size budget before parsing', () => {
    expect(codeOf(() => parseMessage(msg('Subject: x\n\n' + 'a'.repeat(100)), { maxMessageBytes: 50 }))).toBe(
      'MAILGATE_ERR_MIME_TOO_LARGE',
    );
    expect(codeOf(() => parseMessage(msg('Subject: x\n\nb'), { maxMessageBytes: 0 }))).toBe('MAILGATE_ERR_MIME_TOO_LARGE');
    expect(codeOf(() => parseMessage(msg('Subject: x\n\nb'), { maxMessageBytes: -1 }))).toBe('MAILGATE_ERR_CONFIG_INVALID');
  });

  it('refuses empty and whitespace-only input', () => {
    expect(codeOf(() => parseMessage(new Uint8Array(0)))).toBe('MAILGATE_ERR_MIME_EMPTY');
    expect(codeOf(() => parseMessage(msg(' \r\n\t\n')))).toBe('MAILGATE_ERR_MIME_EMPTY');
  });

  it('refuses input that starts with no header field', () => {
    expect(codeOf(() => parseMessage(msg('just some text\nno headers')))).toBe('MAILGATE_ERR_MIME_NOT_EMAIL');
    expect(codeOf(() => parseMessage(Buffer.from([0, 1, 2, 255, 10, 10])))).toBe('MAILGATE_ERR_MIME_NOT_EMAIL');
  });
});

describe('parseMessage: headers and simple bodies', () => {
  it('keeps the header block with LF line breaks and decodes the text', () => {
    const p = parseMessage(msg('Subject: hi\r\nTo: a@b\r\n  c@d\r\n\r\nline 1\r\nline 2\r\n'));
    expect(p.headerBlock).toBe('Subject: hi\nTo: a@b\n  c@d');
    expect(p.headers.map((h) => h.key)).toEqual(['subject', 'to']);
    expect(p.text).toBe('line 1\nline 2\n');
    expect(p.html).toBeUndefined();
    expect(p.warnings).toEqual([]);
  });

  it('accepts a Uint8Array that is not a Buffer, at an offset', () => {
    const bytes = new Uint8Array(msg('xxSubject: a\n\nbody'));
    const p = parseMessage(bytes.subarray(2));
    expect(p.text).toBe('body');
    expect(p.size).toBe(bytes.length - 2);
  });

  it('skips an mbox From_ line and leading blank lines', () => {
    const p = parseMessage(msg('\n\nFrom a@b Thu Aug 22 12:36:23 2002\nSubject: s\n\nx'));
    expect(p.headerBlock).toBe('Subject: s');
  });

  it('decodes 8-bit header bytes per field: UTF-8 when valid, else windows-1252', () => {
    const raw = Buffer.concat([
      Buffer.from('Subject: '),
      Buffer.from('Grüße', 'utf8'),
      Buffer.from('\nFrom: Fran'),
      Buffer.from([0xe7, 0x6f, 0x69, 0x73]),
      Buffer.from('\n\nb'),
    ]);
    const p = parseMessage(raw);
    expect(p.headers.map((h) => h.value)).toEqual(['Grüße', 'François']);
  });

  it('ends the header at a non-header line when the blank line is missing', () => {
    const p = parseMessage(msg('Subject: s\nthis is body\nmore'));
    expect(p.headers).toHaveLength(1);
    expect(p.text).toBe('this is body\nmore');
    expect(p.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_MIME_MALFORMED']);
  });

  it('keeps Message-ID and Date after an unindented wrapped Subject when a blank line follows (stray-header-line regression)', () => {
    const p = parseMessage(
      msg(
        'From: a@example.com\nSubject: long subject that\nwrapped without indent\nMessage-ID: <junk@x>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\nreal body\n',
      ),
    );
    expect(p.headers.map((h) => h.key)).toEqual(['from', 'subject', 'message-id', 'date']);
    expect(p.headers[1]).toMatchObject({
      value: 'long subject that wrapped without indent',
      raw: 'Subject: long subject that\n wrapped without indent',
    });
    expect(p.headerBlock).toContain('\n wrapped without indent\nMessage-ID: <junk@x>');
    expect(p.text).toBe('real body\n');
    expect(p.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_MIME_MALFORMED']);
    expect(p.warnings[0]!.message).toContain('continuation');
  });

  it('reads a field whose name holds 8-bit characters as a field, with a warning (8bit-header-name regression)', () => {
    const raw = Buffer.concat([
      msg('From: a@example.com\nSubject: k\n'),
      Buffer.from('X-Ünïcode: v\n', 'utf8'),
      msg('Message-ID: <k@x>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\nbody\n'),
    ]);
    const p = parseMessage(raw);
    expect(p.headers.map((h) => h.name)).toEqual(['From', 'Subject', 'X-Ünïcode', 'Message-ID', 'Date']);
    expect(p.text).toBe('body\n');
    expect(p.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_MIME_MALFORMED']);
  });

  it('still starts the body at a stray line when what follows up to the blank line is not mostly header fields', () => {
    const p = parseMessage(msg('Subject: s\nHi Bob,\nthe report is late.\nNote: see below\n\nmore'));
    expect(p.headers.map((h) => h.key)).toEqual(['subject']);
    expect(p.text).toBe('Hi Bob,\nthe report is late.\nNote: see below\n\nmore');
    const last = parseMessage(msg('Subject: s\nstray\nX-A: 1\nX-B: 2\nbody text\n\nmore'));
    expect(last.headers.map((h) => h.key)).toEqual(['subject']);
    expect(last.text).toBe('stray\nX-A: 1\nX-B: 2\nbody text\n\nmore');
    expect(last.warnings[0]!.message).toContain('no blank line');
  });

  it('reads bare CR line breaks when the message holds no LF at all (cr-only-line-breaks regression)', () => {
    const raw = msg('From: a@example.com\rSubject: cr only\rMessage-ID: <cr@x>\rDate: Mon, 1 Jan 2024 00:00:00 +0000\r\rbody\rline 2\r');
    const p = parseMessage(raw);
    expect(p.headers.map((h) => h.key)).toEqual(['from', 'subject', 'message-id', 'date']);
    expect(p.text).toBe('body\nline 2\n');
    expect(p.size).toBe(raw.length);
    expect(raw.includes(10)).toBe(false); // the caller's bytes are not written
    // One LF anywhere: CRs are not line breaks (the usual rules apply).
    expect(parseMessage(msg('Subject: a\rb\n\nx')).headers[0]!.value).toBe('a\rb');
  });

  it('reads a message that is only headers', () => {
    const p = parseMessage(msg('Subject: s\nFrom: a@b'));
    expect(p.text).toBe('');
    expect(p.warnings).toEqual([]);
  });

  it('reads quoted-printable and base64 text in their charsets', () => {
    const qp = parseMessage(
      msg('Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\ncaf=E9 soft=\nbreak'),
    );
    expect(qp.text).toBe('café softbreak');
    const b64 = parseMessage(
      msg(
        `Content-Type: text/plain; charset=koi8-r\nContent-Transfer-Encoding: base64\n\n${Buffer.from([0xf0, 0xd2, 0xc9]).toString('base64')}\n`,
      ),
    );
    expect(b64.text).toBe('При');
  });

  it('reads "text/plain charset=x" with a missing semicolon (spam-2/00204)', () => {
    const p = parseMessage(msg('Content-Type: TEXT/PLAIN charset=US-ASCII\n\nhello'));
    expect(p.text).toBe('hello');
    expect(p.attachments).toEqual([]);
  });
});

describe('parseMessage: multipart structure (RFC 8621 body selection)', () => {
  const alt =
    'Content-Type: multipart/alternative; boundary=A\n\n--A\nContent-Type: text/plain\n\nplain\n--A\nContent-Type: text/html\n\n<p>html</p>\n--A--\n';

  it('takes text and html from an alternative', () => {
    const p = parseMessage(msg(alt));
    expect(p.text).toBe('plain');
    expect(p.html).toBe('<p>html</p>');
    expect(p.attachments).toEqual([]);
  });

  it('lists named text parts after the first as attachments, and inline images of related parts as inline attachments', () => {
    const raw = [
      'Content-Type: multipart/mixed; boundary=M',
      '',
      '--M',
      'Content-Type: multipart/related; boundary=R',
      '',
      '--R',
      'Content-Type: text/html',
      '',
      '<img src="cid:i">',
      '--R',
      'Content-Type: image/png',
      'Content-ID: <i>',
      'Content-Transfer-Encoding: base64',
      '',
      'iVBORw0KGgo=',
      '--R--',
      '--M',
      'Content-Type: text/plain; name=log.txt',
      '',
      'log',
      '--M--',
      '',
    ].join('\n');
    const p = parseMessage(msg(raw));
    expect(p.html).toBe('<img src="cid:i">');
    expect(p.text).toBeUndefined();
    expect(p.attachments).toEqual([
      { name: 'attachment-1.png', size: 8, content_type: 'image/png', inline: true },
      { name: 'log.txt', size: 3, content_type: 'text/plain', inline: false },
    ]);
  });

  it('keeps nested message/rfc822 as an .eml attachment without reading into it', () => {
    const raw =
      'Content-Type: multipart/mixed; boundary=M\n\n--M\n\nfirst\n--M\nContent-Type: message/rfc822\n\nSubject: inner\n\ninner body\n--M--';
    const p = parseMessage(msg(raw));
    expect(p.text).toBe('first');
    expect(p.attachments).toEqual([{ name: 'attachment-1.eml', size: 26, content_type: 'message/rfc822', inline: false }]);
  });

  it('uses the first "--" line when the declared boundary never occurs (spam-1/00467)', () => {
    const raw =
      'Content-Type: multipart/alternative; boundary="=Multi 09"\n\n--= Multi 09\nContent-Type: text/plain\n\nthe text\n--= Multi 09--\n';
    const p = parseMessage(msg(raw));
    expect(p.text).toBe('the text');
    expect(p.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_MIME_MALFORMED']);
  });

  it('reads a multipart without any delimiter as text', () => {
    const p = parseMessage(msg('Content-Type: multipart/mixed; boundary=zz\n\nno parts here'));
    expect(p.text).toBe('no parts here');
    expect(p.warnings[0]?.code).toBe('MAILGATE_WARN_MIME_MALFORMED');
  });

  it('does not take a longer boundary that starts with the real one for a delimiter', () => {
    const raw = 'Content-Type: multipart/mixed; boundary=b\n\n--b\n\none\n--bb\nstill one\n--b--\n';
    expect(parseMessage(msg(raw)).text).toBe('one\n--bb\nstill one');
  });

  it(`stops after ${MAX_MIME_PARTS} parts with a warning`, () => {
    let raw = 'Content-Type: multipart/mixed; boundary=p\n\n';
    for (let i = 0; i < MAX_MIME_PARTS + 50; i++) raw += `--p\nContent-Type: application/x-a\n\n${i}\n`;
    const p = parseMessage(msg(`${raw}--p--\n`));
    expect(p.attachments.length).toBeLessThan(MAX_MIME_PARTS);
    expect(p.warnings.some((w) => w.message.includes(`more than ${MAX_MIME_PARTS}`))).toBe(true);
  });
});

describe('quoted-printable', () => {
  it('strips trailing whitespace at the end of encoded lines (RFC 2045 section 6.7 rule 3)', () => {
    const dec = (s: string): string => decodeContent(Buffer.from(s), 0, s.length, 'quoted-printable').toString('latin1');
    expect(dec('a b \t\r\nc\t\nd  ')).toBe('a b\r\nc\nd');
    expect(dec('soft= \t\r\nbreak')).toBe('softbreak');
    expect(dec('kept=20\nkept=09 \n')).toBe('kept \nkept\t\n');
    expect(dec('  \n=3D=\n=3 x=ZZ==')).toBe('\n==3 x=ZZ=');
    const p = parseMessage(msg('Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n\nline one   \nline two\t\n'));
    expect(p.text).toBe('line one\nline two\n');
  });

  it('measures the same size as it decodes, for any mix of escapes, padding and line breaks', () => {
    const token = fc.constantFrom('a', '=', '=4', '=41', '=zz', ' ', '\t', '\r', '\n', '\r\n', '=\n', '= \r\n');
    fc.assert(
      fc.property(fc.array(token, { maxLength: 60 }), fc.nat({ max: 5 }), (tokens, pad) => {
        const buf = Buffer.from('x'.repeat(pad) + tokens.join('') + '=');
        const start = pad;
        const end = buf.length - 1;
        expect(decodedSize(buf, start, end, 'quoted-printable')).toBe(decodeContent(buf, start, end, 'quoted-printable').length);
      }),
      { numRuns: 500 },
    );
  });
});

describe('decoded sizes without decoding', () => {
  const cases: Array<[string, Buffer]> = [
    [
      'base64',
      Buffer.from(
        Buffer.alloc(1001, 7)
          .toString('base64')
          .replace(/(.{76})/g, '$1\r\n'),
      ),
    ],
    ['base64', Buffer.from('QUJD\nREU=\n\n')],
    ['base64', Buffer.from('QUJDRA==  \r\n')],
    ['quoted-printable', Buffer.from('caf=C3=A9 =\r\nnext=20line\r\nend=\nx = y =3')],
    ['quoted-printable', Buffer.from('trailing soft =  \nbreak')],
    ['quoted-printable', Buffer.from('padded \t \r\nline  \n=41=  \r\nend \t')],
    ['7bit', Buffer.from('plain\r\ntext')],
  ];
  it.each(cases)('%s: size equals the decoded length', (cte, content) => {
    const enc = transferEncoding(cte);
    expect(decodedSize(content, 0, content.length, enc)).toBe(decodeContent(content, 0, content.length, enc).length);
  });
});
