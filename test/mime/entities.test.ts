import { describe, expect, it } from 'vitest';
import { decodeEntities } from '../../src/mime/entities.js';

describe('decodeEntities (HTML character references, as an HTML parser reads text)', () => {
  it('knows every named reference of the HTML standard, not only the common ones', () => {
    expect(decodeEntities('&ccaron;esky &Ccaron;')).toBe('česky Č');
    expect(decodeEntities('a &notin; B, &rightarrow; &hearts;')).toBe('a ∉ B, → ♥');
  });

  it('drops a zero-width space written as a reference, like the other invisible ones (&shy;, &zwnj;)', () => {
    expect(decodeEntities('foo&ZeroWidthSpace;bar&shy;baz&zwnj;')).toBe('foobarbaz');
  });

  it('reads legacy references without `;` the way HTML does: &amp, &copy, &lt, and &copy as a prefix', () => {
    expect(decodeEntities('fish &amp chips &copy 2024 &lt3')).toBe('fish & chips © 2024 <3');
    expect(decodeEntities('&copyright')).toBe('©right');
    expect(decodeEntities('&hellip no')).toBe('&hellip no'); // not a legacy name: needs its `;`
  });

  it('leaves unknown references and bare ampersands as written', () => {
    expect(decodeEntities('&foo; &constructor; &EACUTE; R&D AT&T & x&')).toBe('&foo; &constructor; &EACUTE; R&D AT&T & x&');
  });

  it('maps numeric references in the C1 range to Windows-1252, and invalid code points to U+FFFD', () => {
    expect(decodeEntities('&#128;&#x96;&#150;&#x9F;&#129;')).toBe('€––Ÿ\u0081');
    expect(decodeEntities('&#0;&#xD800;&#1114112;')).toBe('\ufffd\ufffd\ufffd');
  });

  it('decodes references outside the BMP whole, named (two UTF-16 halves) and numeric (one code point)', () => {
    expect(decodeEntities('&Afr; &fopf; &#x1F600; &#128512;')).toBe('\u{1D504} \u{1D557} \u{1F600} \u{1F600}');
    expect(decodeEntities('&NotSquareSubset;')).toBe('\u228F\u0338'); // one name, two code points
  });

  it('makes named spaces plain spaces, and returns text without `&` as it is', () => {
    expect(decodeEntities('a&nbsp;b&ensp;c&emsp;d&thinsp;e')).toBe('a b c d e');
    const text = 'no references here';
    expect(decodeEntities(text)).toBe(text);
  });
});
