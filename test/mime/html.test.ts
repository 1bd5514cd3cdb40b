import { describe, it, expect } from 'vitest';
import { htmlToText } from '../../src/mime/html.js';

describe('htmlToText', () => {
  it('turns blocks, breaks, lists and tables into lines', () => {
    const html =
      '<div>a<br><br>b</div><div>c</div><ol><li>x<li>y</ol><ul><li>u</li></ul><table><tr><td>1</td><td>2</td></tr><tr><td>3</td></tr></table><hr>end';
    expect(htmlToText(html)).toBe('a\n\nb\nc\n\n1. x\n2. y\n\n- u\n\n1 2\n3\n\n---\n\nend');
  });

  it('decodes named and numeric entities, windows-1252 numeric references included', () => {
    expect(htmlToText('&amp; &lt;&gt; &quot;&apos; &eacute; &#233; &#xE9; &#150; &nbsp;x &bogus; &constructor;')).toBe(
      '& <> "\' é é é – x &bogus; &constructor;',
    );
  });

  it('drops script, style, head, title and comments', () => {
    expect(htmlToText('<html><head><title>T</title><style>p{}</style></head><body><!-- c --><script>x<y</script>kept</body></html>')).toBe(
      'kept',
    );
    expect(htmlToText('<head><meta charset=utf-8><body>body without closed head')).toBe('body without closed head');
  });

  it('keeps blockquote content prefixed with "> " per level', () => {
    expect(
      htmlToText('<p>Hi</p><blockquote type="cite"><div>quoted <b>one</b></div><blockquote>deeper</blockquote></blockquote><p>after</p>'),
    ).toBe('Hi\n\n> quoted one\n>\n> > deeper\n\nafter');
  });

  it('keeps whitespace in pre and collapses it elsewhere', () => {
    expect(htmlToText('<p>a   b\n  c</p><pre>  x\n    y</pre>')).toBe('a b c\n\n  x\n    y');
  });

  it('survives broken markup', () => {
    expect(htmlToText('<a href="x>unclosed <!-- never closed')).toBe('"x>unclosed');
    expect(htmlToText('a < b and c > d')).toBe('a < b and c > d');
    expect(htmlToText('<p>x</p></blockquote></ul></pre>y')).toBe('x\n\ny');
  });

  it('unclosed script tags cost one scan, not one per tag (quadratic-scan regression)', () => {
    const html = `${'<script>x '.repeat(30_000)}<p>end</p>`;
    expect(htmlToText(html)).toContain('end');
  });
});
