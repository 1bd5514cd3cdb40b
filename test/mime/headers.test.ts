import { describe, it, expect } from 'vitest';
import {
  decodeWords,
  firstMessageId,
  formatAddress,
  getHeader,
  getHeaders,
  parseAddressList,
  parseDate,
  parseHeaderBlock,
  parseMessageIds,
  scanHeaderFields,
} from '../../src/mime/headers.js';
import { datePatterns } from '../../src/mime/date.js';
import { parseStructured } from '../../src/mime/params.js';
import { prng } from '../../src/prng.js';
import type { Warning } from '../../src/errors.js';

describe('parseHeaderBlock', () => {
  it('unfolds values and keeps the raw lines', () => {
    const fields = parseHeaderBlock('Subject: a long\r\n  subject\r\nTo: x@y\r\nReceived: one\nReceived: two\n\nBody: not a header');
    expect(fields.map((f) => f.name)).toEqual(['Subject', 'To', 'Received', 'Received']);
    expect(fields[0]).toEqual({ name: 'Subject', key: 'subject', value: 'a long  subject', raw: 'Subject: a long\n  subject' });
    expect(getHeader(fields, 'SUBJECT')).toBe('a long  subject');
    expect(getHeaders(fields, 'received')).toEqual(['one', 'two']);
    expect(getHeader(fields, 'cc')).toBeUndefined();
  });

  it('accepts obsolete space before the colon and skips junk lines', () => {
    const fields = parseHeaderBlock('Subject : spaced\njunk line\nX-A:b');
    expect(fields.map((f) => [f.key, f.value])).toEqual([
      ['subject', 'spaced'],
      ['x-a', 'b'],
    ]);
  });
});

describe('scanHeaderFields', () => {
  it('says when the raw lines joined are the text as written (the block is then a slice of it)', () => {
    const lf = scanHeaderFields('Received: a\n  b\nSubject: s\n', 'fold');
    expect(lf.contiguous).toBe(true);
    expect(lf.fields.map((f) => f.raw).join('\n')).toBe('Received: a\n  b\nSubject: s');
    expect(lf.rawEnd).toBe('Received: a\n  b\nSubject: s'.length);
    expect(lf.fields.map((f) => f.value)).toEqual(['a  b', 's']);
    const crlf = scanHeaderFields('Received: a\r\n  b\r\nSubject: s\r\n', 'fold');
    expect(crlf.contiguous).toBe(false);
    expect(crlf.fields.map((f) => f.raw)).toEqual(['Received: a\n  b', 'Subject: s']);
    const folded = scanHeaderFields('Subject: a\nwrapped\nTo: t\n', 'fold');
    expect(folded.contiguous).toBe(false);
    expect(folded.fields.map((f) => f.raw)).toEqual(['Subject: a\n wrapped', 'To: t']);
    expect(scanHeaderFields('junk\nTo: t\n', 'skip').contiguous).toBe(false);
  });
});

describe('decodeWords', () => {
  it('decodes B and Q words and drops whitespace between adjacent words', () => {
    expect(decodeWords('=?utf-8?B?SGVsbG8=?= =?utf-8?Q?_W=C3=B6rld?=!')).toBe('Hello Wörld!');
    expect(decodeWords('plain =?iso-8859-1?q?caf=E9?= text')).toBe('plain café text');
  });

  it('joins a multi-byte character split across two encoded-words', () => {
    // "日本" is e6 97 a5 e6 9c ac; split inside the second character.
    const a = Buffer.from([0xe6, 0x97, 0xa5, 0xe6]).toString('base64');
    const b = Buffer.from([0x9c, 0xac]).toString('base64');
    expect(decodeWords(`=?UTF-8?B?${a}?=\r\n =?UTF-8?B?${b}?=`)).toBe('日本');
    expect(decodeWords('=?utf-8?q?=E6=97?= =?utf-8?q?=A5?=')).toBe('日');
  });

  it('decodes any charset and falls back on unknown ones', () => {
    expect(decodeWords('=?koi8-r?B?8NLJ18XU?=')).toBe('Привет');
    expect(decodeWords('=?iso-2022-jp?B?GyRCRnxLXDhsGyhC?=')).toBe('日本語');
    expect(decodeWords('=?x-bogus?Q?ok?=')).toBe('ok');
    expect(decodeWords('=?utf-8*en?Q?lang?=')).toBe('lang');
  });

  it('reports a bogus charset in an encoded-word once, in the warnings given (bogus-encoded-word-charset regression)', () => {
    const warnings: Warning[] = [];
    expect(decodeWords('=?x-bogus?Q?J=FCrgen?= and =?x-other?B?w6Rww6Q=?=', warnings)).toBe('Jürgen and äpä');
    expect(warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_CHARSET_FALLBACK']);
    expect(warnings[0]!.message).toContain('x-bogus');
    const none: Warning[] = [];
    decodeWords('=?iso-8859-1?Q?caf=E9?= =?utf-8?Q?ok?=', none);
    expect(none).toEqual([]);
  });

  it('reports a bogus charset in RFC 2231 and RFC 2047 parameters and address names', () => {
    const a: Warning[] = [];
    expect(parseStructured("attachment; filename*=x-bogus''f%FCr.pdf", a).params.filename).toBe('für.pdf');
    expect(a.map((w) => w.code)).toEqual(['MAILGATE_WARN_CHARSET_FALLBACK']);
    const b: Warning[] = [];
    expect(parseStructured('attachment; filename="=?x-bogus?Q?f=FCr.pdf?="', b).params.filename).toBe('für.pdf');
    expect(b).toHaveLength(1);
    const c: Warning[] = [];
    expect(parseAddressList('=?x-bogus?Q?J=FCrgen?= <j@x.de>, b@x', c)[0]!.name).toBe('Jürgen');
    expect(c).toHaveLength(1);
  });

  it('leaves malformed words alone', () => {
    expect(decodeWords('=?utf-8?X?abc?= and =?broken')).toBe('=?utf-8?X?abc?= and =?broken');
  });
});

describe('parseAddressList', () => {
  it('reads names, quoted names with commas, comments and bare addresses', () => {
    expect(parseAddressList('"Doe, John" <john@example.com>, jane@example.com (Jane Roe), Bob <bob@x>')).toEqual([
      { name: 'Doe, John', address: 'john@example.com' },
      { name: 'Jane Roe', address: 'jane@example.com' },
      { name: 'Bob', address: 'bob@x' },
    ]);
  });

  it('flattens groups and decodes encoded names', () => {
    expect(parseAddressList('Team: a@x, =?utf-8?Q?J=C3=BCrgen?= <j@x>;, undisclosed-recipients:;')).toEqual([
      { address: 'a@x' },
      { name: 'Jürgen', address: 'j@x' },
    ]);
  });

  it('tolerates obsolete routes, missing commas and junk', () => {
    expect(parseAddressList('<@relay.example:user@example.com>')).toEqual([{ address: 'user@example.com' }]);
    expect(parseAddressList('a@x b@y')).toEqual([{ address: 'a@x' }, { address: 'b@y' }]);
    expect(parseAddressList('"unterminated <x@y')).toEqual([{ name: 'unterminated <x@y' }]);
    expect(parseAddressList('Name <unterminated@x')).toEqual([{ name: 'Name', address: 'unterminated@x' }]);
    expect(parseAddressList('')).toEqual([]);
    expect(parseAddressList(',,;')).toEqual([]);
  });

  it('formats addresses', () => {
    expect(formatAddress({ name: 'Ann', address: 'a@b' })).toBe('Ann <a@b>');
    expect(formatAddress({ address: 'a@b' })).toBe('a@b');
    expect(formatAddress({ name: 'Ann' })).toBe('Ann');
  });
});

describe('parseDate', () => {
  it.each([
    ['Tue, 14 May 2024 09:30:00 +0200', '2024-05-14T07:30:00.000Z'],
    ['14 May 2024 09:30 +0200', '2024-05-14T07:30:00.000Z'],
    ['Thu, 22 Aug 2002 07:36:16 -0400 (EDT)', '2002-08-22T11:36:16.000Z'],
    ['Thu, 22 Aug 02 07:36:16 EDT', '2002-08-22T11:36:16.000Z'],
    ['Mon, 1 Jan 99 00:00:00 GMT', '1999-01-01T00:00:00.000Z'],
    ['1 Jan 102 00:00:00 UT', '2002-01-01T00:00:00.000Z'],
    ['Fri, 13 Sep 2002 10:00:00 PST', '2002-09-13T18:00:00.000Z'],
    ['Fri, 13 Sep 2002 10:00:00 PDT', '2002-09-13T17:00:00.000Z'],
    ['Fri, 13 Sep 2002 10:00:00 CET', '2002-09-13T09:00:00.000Z'],
    ['13-Sep-2002 10:00:00 +0000', '2002-09-13T10:00:00.000Z'],
    ['Wed Aug 21 12:00:00 2002', '2002-08-21T12:00:00.000Z'],
    ['2021-03-04T05:06:07Z', '2021-03-04T05:06:07.000Z'],
    ['Tue, 14 May 2024 09:30:00 +0200 junk after', '2024-05-14T07:30:00.000Z'],
    ['Tue, 14 May 2024 09:30:00 -0000', '2024-05-14T09:30:00.000Z'],
    ['Tue, 14 May 2024 09:30:00 +0530', '2024-05-14T04:00:00.000Z'],
    ['Tue, 14 May 2024 09:30:00 -1800', '2024-05-15T03:30:00.000Z'],
    ['Tue, 14 May 2024 09:30:00 +1800', '2024-05-13T15:30:00.000Z'],
    ['Tue, 14 May 2024 09:30:00 +02:00', '2024-05-14T07:30:00.000Z'],
    ['Tue, 14 May 2024 09:30:00 - 0700', '2024-05-14T16:30:00.000Z'],
    ['Tue, 14 May 2024 09:30:00 +930', '2024-05-14T00:00:00.000Z'],
  ])('parses %s', (value, iso) => {
    expect(parseDate(value)?.toISOString()).toBe(iso);
  });

  it.each([
    undefined,
    '',
    'yesterday',
    '32 Jan 2020 10:00:00',
    '1 Foo 2020 10:00:00',
    '1 Jan 2020 25:00:00 +0000',
    '1 Jan 2020 10:00:00 +1801',
    '1 Jan 2020 10:00:00 -1900',
    '1 Jan 2020 10:00:00 +0060',
    '1 Jan 2020 10:00:00 +0099',
  ])('returns undefined for %s', (value) => {
    expect(parseDate(value)).toBeUndefined();
  });

  it.each([
    ['Mon, 29 Jul 2002 06:38:52 +0100', '2002-07-29T05:38:52.000Z'],
    ['mon, 5 aug 2002 23:59:59 -0000', '2002-08-05T23:59:59.000Z'],
    ['29 Jul 2002 06:38:52 -0400 (EDT)', '2002-07-29T10:38:52.000Z'],
    ['Mon, 29 Jul 2002 06:38:52 +01000', '2002-07-29T05:38:52.000Z'],
    ['Mon, 29 Jul 2002 06:38:52 +0100(IST)', '2002-07-29T05:38:52.000Z'],
    ['Mon, 29 Jul 0099 06:38:52 +0000', '1999-07-29T06:38:52.000Z'],
    ['Mon, 29 Jul 2002 06:38:60 +1800', '2002-07-28T12:38:59.000Z'],
  ])('reads the common shape %s as its patterns do', (value, iso) => {
    expect(parseDate(value)?.toISOString()).toBe(iso);
    expect(datePatterns(value)?.toISOString()).toBe(iso);
  });

  it('agrees with its patterns on every variant of the common shape', () => {
    // Each field of `Www, dd Mmm yyyy hh:mm:ss +hhmm` in and out of its common form.
    const fields = [
      ['', 'Mon, ', 'mon, ', 'Tue,', 'Thu , ', '1bc, ', 'Mond, '],
      ['1', '01', '31', '32', '0', '123', 'x'],
      [' ', '  ', '-', '\t', ''],
      ['Jan', 'JAN', 'Sept', 'Foo', 'Ja', 'Dec.'],
      [' ', '  ', '-', ', ', ''],
      ['2002', '02', '102', '0099', '20021', '1949', '2050'],
      [' ', '  ', 'T', ''],
      ['06:38:52', '06:38', '6:38:52', '24:00:00', '23:59:60', '12:60:00', '06.38.52', '06:38:52.123', '06:38:521'],
      [' ', '  ', '', '\t'],
      ['+0100', '-0000', '+1800', '+1801', '-1900', '+0060', '+930', '+01:00', 'GMT', '', '+01000', '+ 0100'],
      ['', ' (EDT)', '(EDT)', ' ', 'x', '0'],
    ];
    const rand = prng(20261128);
    const disagree: string[] = [];
    for (let n = 0; n < 20_000; n++) {
      const value = fields.map((f) => f[Math.floor(rand() * f.length)]!).join('');
      const v = value.trim();
      if (v === '') continue;
      if (parseDate(value)?.getTime() !== datePatterns(v)?.getTime()) disagree.push(value);
    }
    expect(disagree).toEqual([]);
  });
});

describe('parseMessageIds', () => {
  it('returns bare ids with or without brackets', () => {
    expect(parseMessageIds('<a@x> <b@y>\r\n <c@z>')).toEqual(['a@x', 'b@y', 'c@z']);
    expect(parseMessageIds('Your message of Tuesday <a@x>')).toEqual(['a@x']);
    expect(parseMessageIds('a@x, b@y')).toEqual(['a@x', 'b@y']);
    expect(parseMessageIds('abcdef')).toEqual(['abcdef']);
    expect(parseMessageIds('<a@x> <a@x>')).toEqual(['a@x']);
    expect(parseMessageIds(undefined)).toEqual([]);
    expect(parseMessageIds('  ')).toEqual([]);
  });

  it('reads the first id alone as the whole list would give it', () => {
    for (const value of [
      '<a@x> <b@y>\r\n <c@z>',
      '<> < \t> <b@y> <c@z>',
      '< a @x > <b@y>',
      'Your message of Tuesday <a@x>',
      'a@x, b@y',
      'prose without ids, b@y',
      'abcdef',
      '<<a@x>',
      '<a@x',
      '  ',
      '',
      undefined,
    ]) {
      expect(firstMessageId(value)).toBe(parseMessageIds(value)[0]);
    }
  });
});

describe('parseStructured', () => {
  it('reads quoted parameters with semicolons and escapes', () => {
    const v = parseStructured('Text/Plain; charset="utf-8"; name="a;b \\"c\\".txt"; format=flowed');
    expect(v.value).toBe('text/plain');
    expect(v.params).toMatchObject({ charset: 'utf-8', name: 'a;b "c".txt', format: 'flowed' });
  });

  it('joins RFC 2231 continuations, decoding charset and percent escapes across segments', () => {
    const v = parseStructured('attachment; filename*0*=utf-8\'en\'%E6%97%A5%E6; filename*1*=%9C%AC; filename*2=".txt"');
    expect(v.params.filename).toBe('日本.txt');
    expect(parseStructured("inline; filename*=iso-8859-1''r%E9sum%E9.pdf").params.filename).toBe('résumé.pdf');
  });

  it('decodes RFC 2047 words inside quoted values', () => {
    expect(parseStructured('attachment; filename="=?utf-8?B?5pel5pys?=.pdf"').params.filename).toBe('日本.pdf');
  });
});
