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

/** Receives the decoded output of a quoted-printable walk: runs of source bytes and single bytes. */
interface QpSink {
  run(a: number, b: number): void;
  byte(value: number): void;
}

/** Decode the escapes of one line segment buf[a, b) into the sink; invalid escapes stay as written. `eqs` caches the next `=`. */
function qpSegment(buf: Buffer, a: number, b: number, eqs: { at: number }, sink: QpSink): void {
  let pos = a;
  while (pos < b) {
    if (eqs.at !== -1 && eqs.at < pos) eqs.at = buf.indexOf(EQ, pos);
    const eq = eqs.at;
    const stop = eq < 0 || eq >= b ? b : eq;
    if (stop > pos) sink.run(pos, stop);
    if (stop === b) return;
    const h = eq + 2 < b ? hex(buf[eq + 1]) : -1;
    const l = eq + 2 < b ? hex(buf[eq + 2]) : -1;
    if (h >= 0 && l >= 0) {
      sink.byte((h << 4) | l);
      pos = eq + 3;
    } else {
      sink.byte(EQ);
      pos = eq + 1;
    }
  }
}

/**
 * Walk quoted-printable content buf[start, end) line by line: whitespace at the end of each
 * encoded line is transport padding and deleted (RFC 2045 section 6.7 rule 3); a line then
 * ending in `=` is a soft break (the `=` and the line break are removed); other line breaks
 * are kept as written.
 */
function qpWalk(buf: Buffer, start: number, end: number, sink: QpSink): void {
  const eqs = { at: -2 }; // next `=` at or after the cursor; -1: none left, -2: not searched yet
  let pos = start;
  while (pos < end) {
    const nl = buf.indexOf(LF, pos);
    const next = nl < 0 || nl >= end ? end : nl + 1;
    let e = next > pos && buf[next - 1] === LF ? next - 1 : next;
    if (e > pos && buf[e - 1] === CR) e--;
    const br = e;
    while (e > pos && (buf[e - 1] === 32 || buf[e - 1] === 9)) e--;
    const soft = e > pos && buf[e - 1] === EQ;
    qpSegment(buf, pos, soft ? e - 1 : e, eqs, sink);
    if (!soft && next > br) sink.run(br, next);
    pos = next;
  }
}

/** Runs shorter than this are copied byte by byte: a Buffer copy call costs more than that. */
const SHORT_RUN = 32;

/** Decode quoted-printable bytes; invalid escapes are kept as written, soft breaks and transport padding removed. */
export function decodeQuotedPrintable(src: Buffer): Buffer {
  const out = Buffer.allocUnsafe(src.length);
  let n = 0;
  qpWalk(src, 0, src.length, {
    run: (a, b) => {
      if (b - a < SHORT_RUN) for (let i = a; i < b; i++) out[n++] = src[i]!;
      else n += src.copy(out, n, a, b);
    },
    byte: (v) => {
      out[n++] = v;
    },
  });
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
  qpWalk(buf, start, end, {
    run: (a, b) => {
      size += b - a;
    },
    byte: () => {
      size += 1;
    },
  });
  return size;
}

/** Size in decoded bytes of buf[start, end), without decoding. */
export function decodedSize(buf: Buffer, start: number, end: number, enc: TransferEncoding): number {
  if (end <= start) return 0;
  if (enc === 'base64') return base64Size(buf, start, end);
  if (enc === 'quoted-printable') return qpSize(buf, start, end);
  return end - start;
}
