/**
 * Regression: the HTML tag scanner's regex repeated a group per attribute character, so a 10 MB
 * attribute run overflowed its stack and the mail became a MIME_INTERNAL dead letter. The tag's
 * attributes are scanned in one forward pass now.
 */
import { describe, expect, it } from 'vitest';
import { htmlToText } from '../../src/mime/html.js';

const MB = 1024 * 1024;

describe('HTML tag attribute run (regex stack overflow)', () => {
  it('reads a tag with a 10 MB attribute run', () => {
    expect(htmlToText(`<p>before</p><a ${'b'.repeat(10 * MB)}>link</a><p>after</p>`)).toBe('before\n\nlink\n\nafter');
  });

  it('reads a tag of millions of quoted values', () => {
    expect(htmlToText(`<div ${'x="1" '.repeat(2 * MB)}>inside</div>`)).toBe('inside');
  });

  it('keeps the old reading of quotes: > inside a quoted value, a quote never closed ends the tag', () => {
    expect(htmlToText('<a title="a>b">text</a>')).toBe('text');
    expect(htmlToText('<a title="open>text')).toContain('text');
  });
});
