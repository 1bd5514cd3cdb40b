/**
 * mbox layer 2: turn segments into messages. Drops the mbox separator blank line, unquotes
 * `>From ` lines, and honours a `Content-Length` header when it is consistent with the file
 * (mboxcl/mboxcl2): then the body is exactly that many bytes, `From ` lines inside it are body
 * text, and the bytes are taken verbatim.
 */
/** How `From ` lines inside a message are quoted: mboxrd (`>+From `), mboxo (`>From `) or not at all. */
export type MboxQuoting = 'mboxrd' | 'mboxo' | 'none';
import type { Segment } from './mbox-split.js';

const LF = 0x0a;
const CR = 0x0d;
const GT = 0x3e;
const CONTENT_LENGTH_RE = /^content-length:[ \t]*(\d{1,15})[ \t]*\r?$/im;

export interface MboxMessage {
  start: number;
  end: number;
  /** The `From ` line that opened the message. */
  fromLine: Buffer;
  /** The message bytes; undefined when the message exceeded the size budget. */
  raw?: Buffer;
  size: number;
}

/** Offset just past the blank line that ends the header block, or -1 when there is none. */
export function headerEnd(bytes: Buffer): number {
  let i = 0;
  for (;;) {
    const lf = bytes.indexOf(LF, i);
    if (lf === -1) return -1;
    const lineLen = lf - i;
    if (lineLen === 0 || (lineLen === 1 && bytes[i] === CR)) return lf + 1;
    i = lf + 1;
  }
}

/** The Content-Length header value of a message, if it has exactly one usable one. */
export function contentLength(bytes: Buffer, hdrEnd: number): number | undefined {
  const block = bytes.toString('latin1', 0, hdrEnd);
  const m = CONTENT_LENGTH_RE.exec(block);
  return m ? Number(m[1]) : undefined;
}

/** Removes the one trailing empty line mbox writers put between messages. */
export function stripSeparatorLine(bytes: Buffer): Buffer {
  const n = bytes.length;
  if (n >= 2 && bytes[n - 1] === LF && bytes[n - 2] === LF) return bytes.subarray(0, n - 1);
  if (n >= 4 && bytes[n - 1] === LF && bytes[n - 2] === CR && bytes[n - 3] === LF && bytes[n - 4] === CR) return bytes.subarray(0, n - 2);
  return bytes;
}

/** Removes one `>` from each line matching `>+From ` (mboxrd) or `>From ` (mboxo). */
export function unquote(bytes: Buffer, mode: MboxQuoting): Buffer {
  if (mode === 'none') return bytes;
  const parts: Buffer[] = [];
  let copied = 0;
  let lineStart = 0;
  while (lineStart < bytes.length) {
    if (bytes[lineStart] === GT) {
      let j = lineStart;
      while (bytes[j] === GT) j++;
      const quoted = mode === 'mboxrd' ? j > lineStart : j === lineStart + 1;
      if (quoted && bytes.toString('latin1', j, j + 5) === 'From ') {
        parts.push(bytes.subarray(copied, lineStart));
        copied = lineStart + 1;
      }
    }
    const lf = bytes.indexOf('\n>', lineStart);
    if (lf === -1) break;
    lineStart = lf + 1;
  }
  if (parts.length === 0) return bytes;
  parts.push(bytes.subarray(copied));
  return Buffer.concat(parts);
}

/** Body length after the header block is N, or N plus one separating empty line. */
function fitsLength(bytes: Buffer, bodyStart: number, n: number): boolean {
  const body = bytes.length - bodyStart;
  if (body === n) return true;
  if (body === n + 1) return bytes[bytes.length - 1] === LF;
  if (body === n + 2) return bytes[bytes.length - 1] === LF && bytes[bytes.length - 2] === CR;
  return false;
}

export class MboxFinisher {
  /** Segments held while a Content-Length message may extend over `From ` lines. */
  private group: Segment[] = [];
  private groupBytes = 0;
  private groupTarget = { bodyStart: 0, length: 0 };

  constructor(
    private readonly quoting: MboxQuoting,
    private readonly maxBytes: number,
  ) {}

  push(seg: Segment): MboxMessage[] {
    if (this.group.length === 0) return this.first(seg);
    if (!seg.bytes) return [...this.flushGroup(), this.plain(seg)];
    this.group.push(seg);
    this.groupBytes += seg.fromLine.length + seg.bytes.length;
    const merged = this.groupBytes;
    const { bodyStart, length } = this.groupTarget;
    if (merged - bodyStart < length) return [];
    if (merged - bodyStart <= length + 2) {
      const bytes = Buffer.concat(
        this.group.flatMap((s, i) => (i === 0 ? [s.bytes!] : [s.fromLine, s.bytes!])),
        merged,
      );
      if (fitsLength(bytes, bodyStart, length)) {
        const first = this.group[0]!;
        this.group = [];
        return [
          {
            start: first.start,
            end: seg.end,
            fromLine: first.fromLine,
            raw: bytes.subarray(0, bodyStart + length),
            size: bodyStart + length,
          },
        ];
      }
    }
    return this.flushGroup();
  }

  end(): MboxMessage[] {
    const out: MboxMessage[] = [];
    while (this.group.length > 0) out.push(...this.flushGroup());
    return out;
  }

  private first(seg: Segment): MboxMessage[] {
    const bytes = seg.bytes;
    if (!bytes) return [this.plain(seg)];
    const hEnd = headerEnd(bytes);
    const n = hEnd === -1 ? undefined : contentLength(bytes, hEnd);
    if (n === undefined || hEnd + n > this.maxBytes) return [this.plain(seg)];
    if (fitsLength(bytes, hEnd, n))
      return [{ start: seg.start, end: seg.end, fromLine: seg.fromLine, raw: bytes.subarray(0, hEnd + n), size: hEnd + n }];
    if (bytes.length - hEnd < n) {
      this.group = [seg];
      this.groupBytes = bytes.length;
      this.groupTarget = { bodyStart: hEnd, length: n };
      return [];
    }
    return [this.plain(seg)];
  }

  /** The held segments were not one Content-Length message after all: emit them one by one. */
  private flushGroup(): MboxMessage[] {
    const held = this.group;
    this.group = [];
    if (held.length === 0) return [];
    const out: MboxMessage[] = [this.plain(held[0]!)];
    for (const s of held.slice(1)) out.push(...this.push(s));
    return out;
  }

  private plain(seg: Segment): MboxMessage {
    if (!seg.bytes) return { start: seg.start, end: seg.end, fromLine: seg.fromLine, size: seg.size };
    const raw = unquote(stripSeparatorLine(seg.bytes), this.quoting);
    return { start: seg.start, end: seg.end, fromLine: seg.fromLine, raw, size: raw.length };
  }
}
