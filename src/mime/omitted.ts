/**
 * Stub parts: a leaf part whose content was left out on purpose (the IMAP adapter does this
 * for attachments it did not download) carries its decoded size in an
 * `X-Mailgate-Omitted-Size` field of its MIME header, so the document is the same as from
 * the full message.
 */
import type { HeaderField } from './types.js';

const LF = 10;
const CR = 13;

/** Marker of a stub part whose content was left out on purpose; value: the decoded size. */
export const OMITTED_SIZE_FIELD = 'x-mailgate-omitted-size';
const OMITTED_SIZE_RE = /^[0-9]{1,15}$/;

function blankContent(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== CR && c !== LF && c !== 32 && c !== 9) return false;
  }
  return true;
}

/**
 * The size declared by a stub part: exactly one X-Mailgate-Omitted-Size field holding 1-15
 * digits, on a leaf part whose content is empty (only CR, LF, space, tab). Otherwise undefined.
 */
export function omittedSize(fields: readonly HeaderField[], buf: Buffer, start: number, end: number): number | undefined {
  let value: string | undefined;
  for (const f of fields) {
    if (f.key !== OMITTED_SIZE_FIELD) continue;
    if (value !== undefined) return undefined;
    value = f.value.trim();
  }
  if (value === undefined || !OMITTED_SIZE_RE.test(value) || !blankContent(buf, start, end)) return undefined;
  return Number(value);
}
