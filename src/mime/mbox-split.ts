/**
 * mbox layer 1: cut a byte stream into segments at `From ` separator lines, chunk by chunk,
 * with a carry buffer that never holds more than one short, incomplete line. A segment's
 * bytes are kept only while they fit the size budget; beyond it the segment is marked
 * oversized and its bytes are dropped as they stream by (memory stays bounded).
 */

const LF = 0x0a;
const CR = 0x0d;
const NL_FROM = Buffer.from('\nFrom ', 'latin1');
const FROM = 'From ';
/** A `From ` line longer than this is body text, not a separator. */
const MAX_FROM_LINE = 1024;
/** asctime-like date on a From_ line: a time and a four-digit year. */
const TIME_RE = /\d{1,2}:\d{2}/;
const YEAR_RE = /\b\d{4}\b/;

export interface Segment {
  /** Absolute offset of the segment's `From ` line. */
  start: number;
  /** Absolute offset just past the segment (the next `From ` line, or end of file). */
  end: number;
  /** The `From ` line, with its line break. */
  fromLine: Buffer;
  /** The message bytes after the `From ` line, up to `end`; undefined when oversized. */
  bytes?: Buffer;
  /** Size of the bytes after the `From ` line. */
  size: number;
}

/**
 * Whether a line starting with `From ` separates messages. The first line of the stream always
 * does. Elsewhere a From_ line carries a date: after an empty line (the mbox convention) a time
 * or a year suffices; without one both a time and a year are needed, so body prose such as
 * "From then on, …" is not taken for a separator.
 */
export function isSeparatorLine(line: string, first: boolean, blankBefore: boolean): boolean {
  if (!line.startsWith(FROM)) return false;
  if (first) return true;
  const hasTime = TIME_RE.test(line);
  const hasYear = YEAR_RE.test(line);
  return blankBefore ? hasTime || hasYear : hasTime && hasYear;
}

export class MboxSplitter {
  private carry: Buffer = Buffer.alloc(0);
  /** Absolute offset of the next byte pushed (after the carry). */
  private pos: number;
  private readonly origin: number;
  private atLineStart = true;
  /** Up to the last three bytes before the current buffer, for the blank-line test. */
  private prev: Buffer = Buffer.alloc(0);
  private current: { start: number; fromLine: Buffer; parts: Buffer[]; size: number } | undefined;

  constructor(
    private readonly maxBytes: number,
    startOffset = 0,
  ) {
    this.pos = startOffset;
    this.origin = startOffset;
  }

  /** Bytes seen before the first separator (leading junk), for diagnostics. */
  skipped = 0;

  push(chunk: Buffer): Segment[] {
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const base = this.pos - this.carry.length;
    this.pos += chunk.length;
    this.carry = Buffer.alloc(0);
    const out: Segment[] = [];
    let consumed = 0;
    let search = 0;
    for (;;) {
      const L = this.nextCandidate(buf, search);
      if (L === -1) break;
      search = L + 1;
      const eol = buf.indexOf(LF, L);
      if (eol === -1) {
        if (buf.length - L <= MAX_FROM_LINE) {
          this.append(buf.subarray(consumed, L));
          this.keepPrev(buf, L);
          this.carry = Buffer.from(buf.subarray(L));
          this.atLineStart = true;
          return out;
        }
        break;
      }
      if (eol - L > MAX_FROM_LINE) continue;
      const line = buf.toString('latin1', L, buf[eol - 1] === CR ? eol - 1 : eol);
      const abs = base + L;
      if (!isSeparatorLine(line, abs === this.origin, abs === this.origin || this.blankBefore(buf, L))) continue;
      this.append(buf.subarray(consumed, L));
      const seg = this.finish(abs);
      if (seg) out.push(seg);
      this.current = { start: abs, fromLine: Buffer.from(buf.subarray(L, eol + 1)), parts: [], size: 0 };
      consumed = eol + 1;
      search = eol + 1;
    }
    this.tail(buf, consumed);
    return out;
  }

  end(): Segment[] {
    if (this.carry.length > 0) {
      this.append(this.carry);
      this.carry = Buffer.alloc(0);
    }
    const seg = this.finish(this.pos);
    this.current = undefined;
    return seg ? [seg] : [];
  }

  /** Keeps a possible start of a `From ` line at the end of the buffer as carry; appends the rest. */
  private tail(buf: Buffer, consumed: number): void {
    const lastLf = buf.lastIndexOf(LF);
    const lineStart = lastLf === -1 ? (this.atLineStart ? 0 : -1) : lastLf + 1;
    const rest = lineStart >= consumed && lineStart !== -1 ? buf.subarray(lineStart) : undefined;
    if (rest && rest.length > 0 && rest.length < FROM.length && FROM.startsWith(rest.toString('latin1'))) {
      this.append(buf.subarray(consumed, lineStart));
      this.keepPrev(buf, lineStart);
      this.carry = Buffer.from(rest);
      this.atLineStart = true;
      return;
    }
    this.append(buf.subarray(consumed));
    this.keepPrev(buf, buf.length);
    this.atLineStart = buf.length > 0 ? buf[buf.length - 1] === LF : this.atLineStart;
  }

  private nextCandidate(buf: Buffer, from: number): number {
    if (from === 0 && this.atLineStart && buf.length >= FROM.length && buf.toString('latin1', 0, FROM.length) === FROM) return 0;
    const idx = buf.indexOf(NL_FROM, from === 0 ? 0 : from - 1);
    return idx === -1 ? -1 : idx + 1;
  }

  private byteAt(buf: Buffer, i: number): number | undefined {
    return i >= 0 ? buf[i] : this.prev[this.prev.length + i];
  }

  /** The line before the one at L (which ends at L-1) is empty. */
  private blankBefore(buf: Buffer, L: number): boolean {
    const b2 = this.byteAt(buf, L - 2);
    if (b2 === LF) return true;
    return b2 === CR && this.byteAt(buf, L - 3) === LF;
  }

  private keepPrev(buf: Buffer, upto: number): void {
    const from = Math.max(0, upto - 3);
    this.prev = Buffer.concat([this.prev, buf.subarray(from, upto)]).subarray(-3);
    this.prev = Buffer.from(this.prev);
  }

  private append(slice: Buffer): void {
    if (slice.length === 0) return;
    const cur = this.current;
    if (!cur) {
      this.skipped += slice.length;
      return;
    }
    cur.size += slice.length;
    if (cur.size > this.maxBytes) {
      cur.parts = [];
      return;
    }
    cur.parts.push(slice);
  }

  private finish(end: number): Segment | undefined {
    const cur = this.current;
    if (!cur) return undefined;
    const bytes = cur.size > this.maxBytes ? undefined : Buffer.concat(cur.parts, cur.size);
    return { start: cur.start, end, fromLine: cur.fromLine, bytes, size: cur.size };
  }
}
