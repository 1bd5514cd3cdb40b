import { describe, it, expect } from 'vitest';
import iconv from 'iconv-lite';
import { decodeBytes, normalizeCharset } from '../../src/mime/charset.js';

const enc = (text: string, charset: string): Uint8Array => iconv.encode(text, charset);

describe('decodeBytes', () => {
  it('decodes utf-8 and strips nothing else', () => {
    expect(decodeBytes(Buffer.from('Grüße ✓ 😀', 'utf8'), 'UTF-8')).toEqual({ text: 'Grüße ✓ 😀' });
  });

  it.each([
    ['iso-8859-2', 'Zażółć gęślą jaźń'],
    ['iso-8859-5', 'Привет'],
    ['iso-8859-7', 'Καλημέρα'],
    ['iso-8859-15', 'Prix 10 € œuvre'],
    ['windows-1250', 'Příliš žluťoučký'],
    ['windows-1251', 'Здравствуйте'],
    ['windows-1253', 'Ελληνικά'],
    ['windows-1255', 'שלום'],
    ['windows-1256', 'مرحبا'],
    ['koi8-r', 'Отчёт'],
    ['koi8-u', 'Привіт'],
    ['shift_jis', '日本語のメール'],
    ['euc-jp', '日本語のメール'],
    ['euc-kr', '안녕하세요'],
    ['gbk', '你好世界'],
    ['gb18030', '你好 𠀀'],
    ['big5', '請查收'],
    ['utf-7', 'Hi Mom -☺-! 日本'],
    ['utf-16le', 'little ½'],
    ['utf-16be', 'big ½'],
  ])('decodes %s', (charset, text) => {
    expect(decodeBytes(enc(text, charset), charset)).toEqual({ text });
  });

  it.each([
    ['gb2312', 'gbk', '你好'],
    ['x-sjis', 'shift_jis', '日本'],
    ['ks_c_5601-1987', 'euc-kr', '한국어'],
    ['unicode-1-1-utf-7', 'utf-7', 'A≢Α'],
    ['latin1', 'windows-1252', 'café'],
    ['cp1252', 'windows-1252', '“quotes”'],
    ['win-1251', 'windows-1251', 'Да'],
    ['iso8859-1', 'windows-1252', 'naïve'],
    ['"UTF-8";', 'utf8', 'ok ✓'],
    ['utf-8*en', 'utf8', 'lang suffix'],
  ])('understands the alias %s', (label, real, text) => {
    expect(decodeBytes(enc(text, real), label)).toEqual({ text });
  });

  it('decodes iso-2022-jp', () => {
    const bytes = Buffer.from('1b2442467c4b5c386c244e2561213c256b2447243921231b2842', 'hex');
    expect(decodeBytes(bytes, 'iso-2022-jp').text).toBe('日本語のメールです。');
  });

  it('sniffs the utf-16 byte order mark, and guesses without one', () => {
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), enc('BOM big', 'utf-16be')]);
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), enc('BOM little', 'utf-16le')]);
    expect(decodeBytes(be, 'utf-16').text).toBe('BOM big');
    expect(decodeBytes(le, 'utf-16').text).toBe('BOM little');
    expect(decodeBytes(enc('no bom', 'utf-16be'), 'utf-16').text).toBe('no bom');
    expect(decodeBytes(enc('no bom', 'utf-16le'), 'UTF-16').text).toBe('no bom');
  });

  it('windows-1252 C1 bytes decode to their windows-1252 meaning (Node TextDecoder treats windows-1252 as latin1)', () => {
    const bytes = Buffer.from([0x93, 0x41, 0x94, 0x20, 0x80, 0x20, 0x96, 0x92]);
    expect(decodeBytes(bytes, 'windows-1252').text).toBe('“A” € –’');
    expect(decodeBytes(bytes, 'iso-8859-1').text).toBe('“A” € –’');
    expect(decodeBytes(bytes, undefined).text).toBe('“A” € –’');
  });

  it('decodes missing and us-ascii labels by the fallback rule without a warning', () => {
    expect(decodeBytes(Buffer.from('Ærø', 'utf8'), undefined)).toEqual({ text: 'Ærø' });
    expect(decodeBytes(Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'us-ascii')).toEqual({ text: 'café' });
  });

  it.each(['x-bogus', 'default', 'unknown-8bit', 'x-user-defined', 'iso-2022-kr', '', '=?'])(
    'falls back on the label "%s" with a warning',
    (label) => {
      const utf8 = decodeBytes(Buffer.from('Ærø ✓', 'utf8'), label);
      const cp = decodeBytes(Buffer.from([0x93, 0x68, 0xe9, 0x94]), label);
      expect(utf8.text).toBe('Ærø ✓');
      expect(cp.text).toBe('“hé”');
      if (label !== '') expect(utf8.warning?.code).toBe('MAILGATE_WARN_CHARSET_FALLBACK');
    },
  );

  it('returns empty text for empty input', () => {
    expect(decodeBytes(new Uint8Array(0), 'utf-8')).toEqual({ text: '' });
  });

  it('normalizes labels', () => {
    expect(normalizeCharset(' "ISO-8859-1" ')).toBe('iso-8859-1');
    expect(normalizeCharset('utf-8*de')).toBe('utf-8');
  });
});
