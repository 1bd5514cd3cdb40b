/**
 * RFC 2047 encoded-words (`=?charset?B|Q?text?=`) in header values.
 *
 * Adjacent encoded-words (separated only by whitespace) in the same charset are joined
 * at the byte level before decoding, so a multi-byte character split across two words
 * decodes correctly. Encoded-words glued to other text are decoded too (common, if not
 * allowed by the RFC).
 */
import type { Warning } from '../errors.js';
import { addWarningOnce, decodeBytes } from './charset.js';

const WORD_RE = /=\?([^?\s]{1,64})\?([bBqQ])\?([^?]*)\?=/g;

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** Q encoding: `_` is a space, `=XX` a byte; anything else stands for itself. */
export function decodeQ(text: string, underscoreIsSpace = true): Buffer {
  const out = Buffer.allocUnsafe(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 61 && i + 2 < text.length) {
      const h = hexValue(text.charCodeAt(i + 1));
      const l = hexValue(text.charCodeAt(i + 2));
      if (h >= 0 && l >= 0) {
        out[n++] = h * 16 + l;
        i += 2;
        continue;
      }
    }
    out[n++] = c === 95 && underscoreIsSpace ? 32 : c & 0xff;
  }
  return out.subarray(0, n);
}

function wordBytes(encoding: string, text: string): Buffer {
  return encoding === 'b' || encoding === 'B' ? Buffer.from(text, 'base64') : decodeQ(text);
}

/**
 * Decode every RFC 2047 encoded-word in a header value; unknown charsets use the fallback rule
 * and add MAILGATE_WARN_CHARSET_FALLBACK to `warnings` (once: not when one is already there).
 */
export function decodeWords(value: string, warnings?: Warning[]): string {
  if (!value.includes('=?')) return value;
  let out = '';
  let last = 0;
  let pendingCharset: string | undefined;
  let pending: Buffer[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    const decoded = decodeBytes(pending.length === 1 ? pending[0]! : Buffer.concat(pending), pendingCharset);
    out += decoded.text;
    addWarningOnce(warnings, decoded.warning);
    pending = [];
    pendingCharset = undefined;
  };
  WORD_RE.lastIndex = 0;
  for (let m = WORD_RE.exec(value); m !== null; m = WORD_RE.exec(value)) {
    const gap = value.slice(last, m.index);
    const charset = m[1]!.toLowerCase().split('*')[0]!;
    const adjacent = pending.length > 0 && gap.trim() === '';
    if (!adjacent) {
      flush();
      out += gap;
    } else if (charset !== pendingCharset) {
      flush();
    }
    pendingCharset = charset;
    pending.push(wordBytes(m[2]!, m[3]!));
    last = m.index + m[0].length;
  }
  flush();
  return out + value.slice(last);
}
