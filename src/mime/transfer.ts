/**
 * Content-Transfer-Encoding: decoding text parts, and measuring the decoded size of
 * attachments WITHOUT decoding them (base64 counted arithmetically per line, quoted-printable
 * by the decoder's walk, counting).
 */

const LF = 10;
const CR = 13;
const EQ = 61;

function hex(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

export type TransferEncoding = 'base64' | 'quoted-printable' | 'identity';

export function transferEncoding(value: string | undefined): TransferEncoding {
  if (value === undefined) return 'identity';
  const v = value.trim().toLowerCase();
  if (v === 'base64' || v.startsWith('base64')) return 'base64';
  if (v === 'quoted-printable' || v === 'quoted_printable' || v === 'qp') return 'quoted-printable';
  return 'identity';
}

/** Hex digit values by byte, -1 for a byte that is not a hex digit. */
const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 256; i++) HEX[i] = hex(i);

/*
 * Quoted-printable, line by line: whitespace at the end of each encoded line is transport
 * padding and deleted (RFC 2045 section 6.7 rule 3); a line then ending in `=` is a soft break
 * (the `=` and the line break are removed); other line breaks are kept as written. In the
 * rest, `=` and two hex digits is a byte; any other `=` stays as written.
 *
 * Lines are found with indexOf and read byte by byte: quoted-printable text is mostly short
 * runs between escapes, where a call per run (indexOf, copy) costs more than the bytes.
 */

/** qpLine's answer, in module variables (no object per line). */
let lineText = 0; // end of the encoded text: before padding and a soft break's `=`
let lineSoft = false;
let lineBreak = 0; // where the line break starts
let lineNext = 0; // where the next line starts

/** Read the line of buf[pos, end) that starts at `pos` into the line variables. */
function qpLine(src: Buffer, pos: number, end: number): void {
  let nl = src.indexOf(LF, pos);
  if (nl < 0 || nl >= end) nl = end;
  lineNext = nl < end ? nl + 1 : end;
  let e = nl;
  if (e > pos && src[e - 1] === CR) e--;
  lineBreak = e;
  while (e > pos && (src[e - 1] === 32 || src[e - 1] === 9)) e--;
  lineSoft = e > pos && src[e - 1] === EQ;
  lineText = lineSoft ? e - 1 : e;
}

/** Decode quoted-printable bytes; invalid escapes are kept as written, soft breaks and transport padding removed. */
export function decodeQuotedPrintable(src: Buffer): Buffer {
  const out = Buffer.allocUnsafe(src.length);
  const len = src.length;
  let n = 0;
  let pos = 0;
  // qpLine inlined: this loop is the hot one, and locals are cheaper than module variables.
  while (pos < len) {
    let nl = src.indexOf(LF, pos);
    if (nl < 0) nl = len;
    const next = nl < len ? nl + 1 : len;
    let e = nl;
    if (e > pos && src[e - 1] === CR) e--;
    const br = e;
    while (e > pos && (src[e - 1] === 32 || src[e - 1] === 9)) e--;
    const soft = e > pos && src[e - 1] === EQ;
    const b = soft ? e - 1 : e;
    for (let i = pos; i < b; i++) {
      let c = src[i]!;
      if (c === EQ && i + 2 < b) {
        const h = HEX[src[i + 1]!]!;
        const l = HEX[src[i + 2]!]!;
        if (h >= 0 && l >= 0) {
          c = (h << 4) | l;
          i += 2;
        }
      }
      out[n++] = c;
    }
    if (!soft) for (let i = br; i < next; i++) out[n++] = src[i]!;
    pos = next;
  }
  return out.subarray(0, n);
}

/** The decoded content of buf[start, end). */
export function decodeContent(buf: Buffer, start: number, end: number, enc: TransferEncoding): Buffer {
  if (enc === 'base64') return Buffer.from(buf.toString('latin1', start, end), 'base64');
  if (enc === 'quoted-printable') return decodeQuotedPrintable(buf.subarray(start, end));
  return buf.subarray(start, end);
}

function isBase64Char(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 45 || c === 95;
}

/**
 * Decoded size of base64 content: per line, the base64 characters are counted by trimming
 * line ends and `=` padding (lines are assumed to hold only base64 characters, as encoders
 * write them; a line with inner junk is counted character by character).
 */
function base64Size(buf: Buffer, start: number, end: number): number {
  let chars = 0;
  let pos = start;
  while (pos < end) {
    let nl = buf.indexOf(LF, pos);
    if (nl < 0 || nl > end) nl = end;
    let a = pos;
    let b = nl;
    while (b > a && !isBase64Char(buf[b - 1]!)) b--;
    while (a < b && !isBase64Char(buf[a]!)) a++;
    const len = b - a;
    if (len > 0) chars += len <= 200 ? len : countBase64(buf, a, b);
    pos = nl + 1;
  }
  return Math.floor((chars * 3) / 4);
}

function countBase64(buf: Buffer, a: number, b: number): number {
  let n = 0;
  for (let i = a; i < b; i++) if (isBase64Char(buf[i]!)) n++;
  return n;
}

/** Decoded size of quoted-printable content: the same walk as decoding, counting instead of copying. */
function qpSize(buf: Buffer, start: number, end: number): number {
  let size = 0;
  let pos = start;
  while (pos < end) {
    qpLine(buf, pos, end);
    const b = lineText;
    for (let i = pos; i < b; i++) {
      if (buf[i] === EQ && i + 2 < b && HEX[buf[i + 1]!]! >= 0 && HEX[buf[i + 2]!]! >= 0) i += 2;
      size++;
    }
    if (!lineSoft) size += lineNext - lineBreak;
    pos = lineNext;
  }
  return size;
}

/** Size in decoded bytes of buf[start, end), without decoding. */
export function decodedSize(buf: Buffer, start: number, end: number, enc: TransferEncoding): number {
  if (end <= start) return 0;
  if (enc === 'base64') return base64Size(buf, start, end);
  if (enc === 'quoted-printable') return qpSize(buf, start, end);
  return end - start;
}
