/**
 * Regression: an Outlook .msg whose body exists only as compressed RTF gave an empty body. The
 * RTF is decompressed (LZFu); HTML encapsulated in it is taken out as HTML, an RTF written in
 * Outlook's own editor is reduced to plain text.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { msgToRfc822 } from '../../src/mime/msg.js';
import { compressedRtfBody, decompressRtf } from '../../src/mime/rtf.js';
import { readBack } from './support/mail.js';
import { sample } from './support/paths.js';
import { compressRtf } from './support/rtf-compress.js';

describe('RTF-only .msg bodies', () => {
  it('reads a body written in the RTF editor as plain text (escapes and code page decoded)', async () => {
    const mail = await readBack(msgToRfc822(readFileSync(sample('msg/rtf-only.msg'))));
    expect(mail.subject).toBe('Quarterly figures');
    expect(mail.to).toEqual(['pat@example.com']);
    expect(mail.text).toContain('Hello Pat,');
    expect(mail.text).toContain('revenue up 4 € per seat.');
    expect(mail.html).toBeUndefined();
  });

  it('takes HTML encapsulated in the RTF out as the HTML body', async () => {
    const mail = await readBack(msgToRfc822(readFileSync(sample('msg/rtf-html.msg'))));
    expect(mail.html).toBe('<html><body><p>Lunch on <b>Friday</b> at the café?</p></body></html>');
  });

  it('refuses a compressed RTF header that claims more bytes than it holds, without allocating them', () => {
    const good = compressRtf(String.raw`{\rtf1\ansi hello\par}`);
    const lying = Buffer.from(good);
    lying.writeUInt32LE(0x7fffffff, 0);
    expect(decompressRtf(lying)).toBeUndefined();
    const huge = Buffer.from(good);
    huge.writeUInt32LE(0x7fffffff, 4);
    expect(decompressRtf(huge)).toBeUndefined();
    expect(compressedRtfBody(good)).toEqual({ type: 'plain', text: 'hello\r\n' });
  });
});
