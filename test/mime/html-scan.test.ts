/**
 * The HTML tag scanner reads markup without regexes: its whitespace set must be exactly the one
 * `\s` had, and `<` that starts no tag, comments and `<!…>`/`<?…>` constructs read as before.
 */
import { describe, expect, it } from 'vitest';
import { isSpace } from '../../src/mime/spaces.js';
import { LINE, PARAGRAPH, SKIP, knownTag } from '../../src/mime/html-tags.js';
import { htmlToText } from '../../src/mime/html.js';

describe('HTML scanner without regexes', () => {
  it('isSpace is /\\s/ for every UTF-16 code unit', () => {
    const differ: number[] = [];
    for (let c = 0; c <= 0xffff; c++) if (isSpace(c) !== /\s/.test(String.fromCharCode(c))) differ.push(c);
    expect(differ).toEqual([]);
  });

  it('collapses every \\s run to one space, outside <pre> only', () => {
    expect(htmlToText('a\u00a0\u2003 b\u200b\ufeffc\u3000\u3000d')).toBe('a b\u200b c d');
    expect(htmlToText(' lead\t\n trail ')).toBe('lead trail');
    expect(htmlToText('<pre>  keep \u00a0 </pre>x  y')).toBe('keep \u00a0\n\nx y');
  });

  it('a < that starts no tag is text', () => {
    expect(htmlToText('a < b and c<3 d</ 3 e<')).toBe('a < b and c<3 d</ 3 e<');
  });

  it('comments, doctypes and processing instructions, closed or running to the end', () => {
    expect(htmlToText('<!doctype html><?xml version="1.0"?><p>one</p><!--c-->two<!-->three')).toBe('one\n\ntwo');
    expect(htmlToText('<p>x<!-- open comment <p>never')).toBe('x');
    expect(htmlToText('<!broken <p>after')).toBe('after');
    expect(htmlToText('x<?pi')).toBe('x');
  });

  it('element names: case-insensitive, with digits, colons and dashes', () => {
    expect(htmlToText('<DIV>Up</DIV><My-Tag:x a="1">t</My-Tag:x><H2>h</H2>z')).toBe('Up\nt\n\nh\n\nz');
  });

  it('known element names are found in place, in any case, and only whole', () => {
    for (const name of [...PARAGRAPH, ...LINE, ...SKIP, 'br', 'hr', 'td', 'th']) {
      const mixed = [...name].map((ch, i) => (i % 2 === 0 ? ch.toUpperCase() : ch)).join('');
      for (const written of [name, name.toUpperCase(), mixed]) {
        const text = `<${written} x>`;
        expect(knownTag(text, 1, 1 + written.length)?.name).toBe(name);
        expect(knownTag(`${text}s`, 1, 2 + written.length)).toBeUndefined();
        expect(knownTag(text, 1, written.length)?.name).not.toBe(name);
      }
    }
    for (const other of ['span', 'font', 'a', 'h7', 'br2', 'x:p', 'blockquotes', 'b-r'])
      expect(knownTag(other, 0, other.length)).toBeUndefined();
  });

  it('unknown elements keep their text; skipped elements in any case drop theirs', () => {
    expect(htmlToText('<SPAN>a</SPAN><Font x="<p>">b</Font><H7>c</H7><SCRIPT>x()</Script>d<STYLE/>e<Br>f')).toBe('abcde\nf');
  });
});
