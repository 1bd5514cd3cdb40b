/**
 * Fuzzer findings (samples/fuzz/): messages of ~100 KB that took seconds to a minute to
 * preview, past the 5 s parse budget. Trailing-whitespace regexes (/\s+$/, /[ \t]+$/) retried
 * every position of a long inner whitespace run (quadratic), and thousands of unclosed <ul> or
 * <blockquote> wrote an indentation per line that grew with their number (quadratic text), and
 * a run of header-like lines was rescanned for a quoted header block from each of its lines.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { truncateText } from '../../src/document/truncate.js';
import { htmlToText } from '../../src/mime/html.js';
import { previewSync } from '../../src/preview/index.js';

const FUZZ = join(import.meta.dirname, '..', '..', 'samples', 'fuzz');

describe('quadratic whitespace and nesting (fuzzer findings)', () => {
  it('truncating a body that holds a long whitespace run before the cut', () => {
    const text = `x${' '.repeat(300_000)}${'y'.repeat(1000)}`;
    expect(truncateText(text, 200_000)).toBe('x');
    expect(truncateText(`${'a'.repeat(70_000)}   \n\t `, 65_536)).toBe('a'.repeat(65_536));
  });

  it('HTML lines with a long inner run of spaces (kept as they are in <pre>)', () => {
    const html = `<pre>a${' \t'.repeat(150_000)}b  </pre>`;
    expect(htmlToText(html)).toBe(`a${' \t'.repeat(150_000)}b`);
  });

  it('thousands of unclosed <ul> and <blockquote>: indentation and quote prefixes stop growing', () => {
    const lists = htmlToText('<ul><li>item'.repeat(3000));
    expect(lists.length).toBeLessThan(3000 * 60);
    expect(lists.split('\n').at(-1)).toBe(`${'  '.repeat(16)}- item`);
    const quotes = htmlToText('<blockquote>q'.repeat(3000));
    expect(quotes.length).toBeLessThan(3000 * 160);
  });

  it.each(['html-unclosed-lists-quadratic.eml', 'body-long-whitespace-run-quadratic-trim.eml'])(
    'samples/fuzz/%s previews to a document',
    (name) => {
      const result = previewSync(readFileSync(join(FUZZ, name)));
      expect(result.document.comment_id).toMatch(/^[0-9a-f]+$/);
    },
  );
});

describe('a run of thousands of header-like lines in a body (fuzzer finding)', () => {
  it('is scanned for quoted header blocks at most MAX_HEADER_BLOCK_LINES deep from each line', async () => {
    const { stripQuotes } = await import('../../src/preview/quotes.js');
    const { splitterAt, MAX_HEADER_BLOCK_LINES } = await import('../../src/preview/quote-marks.js');
    const run = Array.from({ length: 15_000 }, (_, i) => `Date: ${i} a@example.com`);
    expect(splitterAt(run, 0, true)).toBe(MAX_HEADER_BLOCK_LINES);
    const body = `Hello,\n\n${'Date: N/#85485619\n'.repeat(15_000)}\nbye`;
    expect(stripQuotes(body)).toContain('Hello,');
    const result = previewSync(readFileSync(join(FUZZ, 'body-header-line-run-quadratic-quotes.eml')));
    expect(result.document.comment_id).toMatch(/^[0-9a-f]+$/);
  });
});
