/**
 * Content-Transfer-Encoding: decoding text parts, and measuring the decoded size of
 * attachments WITHOUT decoding them (base64 counted arithmetically per line, quoted-printable
 * by walking its `=` escapes with indexOf).
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

/** Decode quoted-printable bytes; invalid escapes are kept as written, soft breaks removed. */
export function decodeQuotedPrintable(src: Buffer): Buffer {
  const out = Buffer.allocUnsafe(src.length);
  let n = 0;
  let pos = 0;
  while (pos < src.length) {
    const eq = src.indexOf(EQ, pos);
    const stop = eq < 0 ? src.length : eq;
    n += src.copy(out, n, pos, stop);
    if (eq < 0) break;
    const h = hex(src[eq + 1]);
    const l = hex(src[eq + 2]);
    if (h >= 0 && l >= 0) {
      out[n++] = (h << 4) | l;
      pos = eq + 3;
      continue;
    }
    let k = eq + 1;
    while (src[k] === 32 || src[k] === 9) k++;
    if (src[k] === CR && src[k + 1] === LF) pos = k + 2;
    else if (src[k] === LF) pos = k + 1;
    else if (k >= src.length) pos = k;
    else {
      out[n++] = EQ;
      pos = eq + 1;
    }
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

/** Decoded size of quoted-printable content: length minus escapes and soft line breaks. */
function qpSize(buf: Buffer, start: number, end: number): number {
  let size = end - start;
  let pos = start;
  while (pos < end) {
    const eq = buf.indexOf(EQ, pos);
    if (eq < 0 || eq >= end) break;
    if (hex(buf[eq + 1]) >= 0 && hex(buf[eq + 2]) >= 0 && eq + 2 < end) {
      size -= 2;
      pos = eq + 3;
      continue;
    }
    let k = eq + 1;
    while (k < end && (buf[k] === 32 || buf[k] === 9)) k++;
    if (k + 1 < end + 1 && buf[k] === CR && buf[k + 1] === LF) size -= k + 2 - eq;
    else if (buf[k] === LF && k < end) size -= k + 1 - eq;
    else if (k >= end) size -= k - eq;
    pos = eq + 1;
  }
  return Math.max(0, size);
}

/** Size in decoded bytes of buf[start, end), without decoding. */
export function decodedSize(buf: Buffer, start: number, end: number, enc: TransferEncoding): number {
  if (end <= start) return 0;
  if (enc === 'base64') return base64Size(buf, start, end);
  if (enc === 'quoted-printable') return qpSize(buf, start, end);
  return end - start;
}
