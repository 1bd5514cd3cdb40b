/**
 * Finding and reading the header block of a message or body part, on bytes.
 *
 * The header block ends at the first blank line. A line that is neither a field nor a
 * continuation (a stray line) is kept as a continuation of the field above it when the lines
 * from it to that blank line look like header fields (headers.ts foldsStrayLines: a wrapped
 * Subject that lost its indent); otherwise it ends the block (the message forgot the blank
 * line): the body starts at that line and `missingSeparator` is set. 8-bit bytes are decoded
 * per field: UTF-8 when valid, else windows-1252.
 */
import { isAscii } from 'node:buffer';
import { decodeHeaderBytes } from './charset.js';
import { fieldFromRaw, isNonAsciiName, scanHeaderFields } from './headers.js';
import type { HeaderField } from './types.js';

export interface HeaderSplit {
  fields: HeaderField[];
  /** Header text with LF line breaks (8-bit decoded), without the blank separator line. */
  block: string;
  /** Byte offset where the body starts (== end when there is no body). */
  bodyStart: number;
  /** A non-header line ended the block instead of a blank line. */
  missingSeparator: boolean;
  /** Stray lines kept as continuation lines of the field above them. */
  folded: number;
  /** Fields whose name holds non-ASCII characters. */
  nonAsciiNames: number;
}

const LF = 10;
const CR = 13;
const EIGHT_BIT_RE = /[\x80-\xff]/;

/** Offset of the first blank line (its first byte) in [start, end), or -1. */
function blankLine(buf: Buffer, start: number, end: number): { at: number; next: number } | undefined {
  if (buf[start] === LF) return { at: start, next: start + 1 };
  if (buf[start] === CR && buf[start + 1] === LF) return { at: start, next: start + 2 };
  let pos = start;
  while (pos < end) {
    const nl = buf.indexOf(LF, pos);
    if (nl < 0 || nl + 1 >= end) return undefined; // also when the next line break lies beyond this entity
    const c = buf[nl + 1];
    if (c === LF) return { at: nl + 1, next: nl + 2 };
    if (c === CR && nl + 2 < end && buf[nl + 2] === LF) return { at: nl + 1, next: nl + 3 };
    pos = nl + 1;
  }
  return undefined;
}

/** Re-decode the fields holding 8-bit characters (read as latin1): UTF-8 when valid, else windows-1252. */
function decode8bit(fields: HeaderField[]): HeaderField[] {
  return fields.map((f) => {
    if (!EIGHT_BIT_RE.test(f.raw)) return f;
    return fieldFromRaw(decodeHeaderBytes(Buffer.from(f.raw, 'latin1'))) ?? f;
  });
}

/** The fields' raw lines joined with `\n`. */
export function joinRaw(fields: readonly HeaderField[]): string {
  let block = '';
  for (let i = 0; i < fields.length; i++) block += i === 0 ? fields[i]!.raw : `\n${fields[i]!.raw}`;
  return block;
}

/** Read the header block of the entity in buf[start, end). */
export function splitHeader(buf: Buffer, start: number, end: number): HeaderSplit {
  const blank = blankLine(buf, start, end);
  const headerEnd = blank === undefined ? end : blank.at;
  const latin1 = buf.toString('latin1', start, headerEnd);
  // Stray lines can be folded only when a blank line ends the block; without one they end it.
  const scan = scanHeaderFields(latin1, blank === undefined ? 'end' : 'fold');
  const missingSeparator = scan.end < latin1.length;
  const ascii = isAscii(buf.subarray(start, headerEnd));
  const fields = ascii ? scan.fields : decode8bit(scan.fields);
  // When the fields are the text as written, the block is a slice of it, not a copy.
  const block = ascii && scan.contiguous ? latin1.slice(0, scan.rawEnd) : joinRaw(fields);
  let nonAsciiNames = 0;
  if (!ascii) for (const f of fields) if (isNonAsciiName(f.name)) nonAsciiNames++;
  const bodyStart = missingSeparator ? start + scan.end : blank === undefined ? end : blank.next;
  return { fields, block, bodyStart, missingSeparator, folded: scan.folded, nonAsciiNames };
}
