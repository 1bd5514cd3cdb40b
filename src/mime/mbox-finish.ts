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
  /** How often each segment was pushed again after its group fell apart. */
  private readonly flushed = new WeakMap<Segment, number>();

  constructor(
    private readonly quoting: MboxQuoting,
    private readonly maxBytes: number,
  ) {}

  /**
   * The messages `seg` completes. Held segments of a group that was not one Content-Length message
   * after all are pushed again in order, from a work stack rather than by recursion; a segment
   * pushed again twice is taken as it is (it may no longer open a group), so every segment is
   * looked at a bounded number of times whatever the input.
   */
  push(seg: Segment): MboxMessage[] {
    const out: MboxMessage[] = [];
    this.run([seg], out);
    return out;
  }

  end(): MboxMessage[] {
    const out: MboxMessage[] = [];
    while (this.group.length > 0) this.run(this.flushGroup(out), out);
    return out;
  }

  private run(items: Segment[], out: MboxMessage[]): void {
    const stack = [{ items, at: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.at >= top.items.length) {
        stack.pop();
        continue;
      }
      const again = this.step(top.items[top.at++]!, out);
      if (again.length > 0) stack.push({ items: again, at: 0 });
    }
  }

  /** Handles one segment; returns the segments to push again (a group that fell apart). */
  private step(seg: Segment, out: MboxMessage[]): Segment[] {
    if (this.group.length === 0) {
      this.first(seg, out);
      return [];
    }
    if (!seg.bytes) return [...this.flushGroup(out), seg];
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
        out.push({
          start: first.start,
          end: seg.end,
          fromLine: first.fromLine,
          raw: bytes.subarray(0, bodyStart + length),
          size: bodyStart + length,
        });
        return [];
      }
    }
    return this.flushGroup(out);
  }

  private first(seg: Segment, out: MboxMessage[]): void {
    const bytes = seg.bytes;
    if (!bytes || (this.flushed.get(seg) ?? 0) > 1) return void out.push(this.plain(seg));
    const hEnd = headerEnd(bytes);
    const n = hEnd === -1 ? undefined : contentLength(bytes, hEnd);
    if (n === undefined || hEnd + n > this.maxBytes) return void out.push(this.plain(seg));
    if (fitsLength(bytes, hEnd, n))
      return void out.push({ start: seg.start, end: seg.end, fromLine: seg.fromLine, raw: bytes.subarray(0, hEnd + n), size: hEnd + n });
    if (bytes.length - hEnd < n) {
      this.group = [seg];
      this.groupBytes = bytes.length;
      this.groupTarget = { bodyStart: hEnd, length: n };
      return;
    }
    out.push(this.plain(seg));
  }

  /** The held segments were not one Content-Length message after all: the first as it is, the rest to push again. */
  private flushGroup(out: MboxMessage[]): Segment[] {
    const held = this.group;
    this.group = [];
    if (held.length === 0) return [];
    out.push(this.plain(held[0]!));
    const rest = held.slice(1);
    for (const s of rest) this.flushed.set(s, (this.flushed.get(s) ?? 0) + 1);
    return rest;
  }

  private plain(seg: Segment): MboxMessage {
    if (!seg.bytes) return { start: seg.start, end: seg.end, fromLine: seg.fromLine, size: seg.size };
    const raw = unquote(stripSeparatorLine(seg.bytes), this.quoting);
    return { start: seg.start, end: seg.end, fromLine: seg.fromLine, raw, size: raw.length };
  }
}
