/**
 * The pieces of a "pieces" plan read from the two ends of the source instead of from the
 * server's MIME parts: the first bytes (they came with the sizes) and the last bytes (one
 * partial FETCH of the whole message, which a server answers with a seek, no MIME parsing).
 *
 * It works for the usual layout — the text first, the attachments last — when every part
 * before the first stubbed attachment lies in the prefix and everything after it lies in the
 * suffix. The layout is checked exactly against BODYSTRUCTURE: each part's content must have
 * the size the server gave and be followed by its delimiter, so the bytes taken are the ones
 * `BODY[<part>.MIME]`, `BODY[<part>]` and `BODY[<part>]<offset>` would return. Anything else
 * (an attachment in the middle, a part the ends do not reach) gives undefined: the caller
 * fetches the pieces from the server.
 */
import { HEAD_BYTES, TAIL_BYTES, type MultipartNode } from './structure.js';

/** Bytes asked from the end of a message: the last attachment's tail, its delimiter and an epilogue. */
export const SUFFIX_BYTES = 2048;

export interface Ends {
  /** The first bytes of the source. */
  prefix: Buffer;
  /** The source from `suffixStart` to its end. */
  suffix: Buffer;
  suffixStart: number;
}

export interface EndPieces {
  header: Buffer;
  /** `<part>.mime`, `<part>` (content, or the tail of a stubbed part), as the pieces FETCH files them. */
  parts: Map<string, Buffer>;
  heads: Map<string, Buffer>;
}

class NotFound extends Error {}

/** One end of the source at its offset in the whole. */
interface Segment {
  buf: Buffer;
  start: number;
}

const CRLF = Buffer.from('\r\n');
const BLANK_LINE = Buffer.from('\r\n\r\n');
const LF = 0x0a;
const CR = 0x0d;

/**
 * `text` as the bytes it stands for (latin1: one byte a character); NotFound when a character
 * cannot be one byte, as such text never stands in a source read byte for byte.
 */
function bytesOf(text: string): Buffer {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) throw new NotFound();
  return Buffer.from(text, 'latin1');
}

/** Reads the two ends where they lie, searching their bytes (no copy of either as text). */
class Reader {
  private readonly segments: Segment[];

  constructor(ends: Ends) {
    this.segments = [
      { buf: ends.prefix, start: 0 },
      { buf: ends.suffix, start: ends.suffixStart },
    ];
  }

  /** The segment holding [from, to), else NotFound. */
  private segment(from: number, to = from): Segment {
    for (const s of this.segments) if (from >= s.start && to <= s.start + s.buf.length) return s;
    throw new NotFound();
  }

  bytes(from: number, to: number): Buffer {
    const s = this.segment(from, to);
    return s.buf.subarray(from - s.start, to - s.start);
  }

  /** Where the content after a header starting at `from` begins (past its blank line). */
  contentStart(from: number): number {
    const s = this.segment(from);
    const at = from - s.start;
    if (s.buf[at] === CR && s.buf[at + 1] === LF) return from + 2;
    const end = s.buf.indexOf(BLANK_LINE, at);
    if (end === -1) throw new NotFound();
    return s.start + end + 4;
  }

  /** The first line at or after `from` that starts with `delimiter`, and where the line after it starts. */
  delimiter(from: number, delimiter: string): { at: number; next: number } {
    const s = this.segment(from);
    const needle = bytesOf(delimiter);
    for (let i = s.buf.indexOf(needle, from - s.start); i !== -1; i = s.buf.indexOf(needle, i + 1)) {
      if (i + s.start !== from && s.buf[i - 1] !== LF) continue;
      const eol = s.buf.indexOf(CRLF, i);
      if (eol === -1) throw new NotFound();
      return { at: s.start + i, next: s.start + eol + 2 };
    }
    throw new NotFound();
  }

  /** True when `text` stands at `at` (a character that cannot be one byte never does). */
  has(at: number, text: string): boolean {
    const s = this.segment(at, at + text.length);
    const from = at - s.start;
    for (let i = 0; i < text.length; i++) if (s.buf[from + i] !== text.charCodeAt(i)) return false;
    return true;
  }
}

/** Walks the multipart whose body starts at `from`; returns where the line after its closing delimiter starts. */
function walk(node: MultipartNode, from: number, r: Reader, out: EndPieces): number {
  const delimiter = `--${node.boundary}`;
  let line = r.delimiter(from, delimiter);
  for (const child of node.children) {
    if (r.has(line.at, `${delimiter}--`)) throw new NotFound();
    const start = r.contentStart(line.next);
    out.parts.set(`${child.part}.mime`.toLowerCase(), r.bytes(line.next, start));
    if (child.kind === 'multipart') {
      line = r.delimiter(walk(child, start, r, out), delimiter);
      continue;
    }
    const end = start + child.size;
    if (child.fetch === 'content') out.parts.set(child.part.toLowerCase(), r.bytes(start, end));
    else {
      out.heads.set(child.part, r.bytes(start, start + HEAD_BYTES));
      out.parts.set(child.part.toLowerCase(), r.bytes(Math.max(start, end - TAIL_BYTES), end));
    }
    // The size BODYSTRUCTURE gave must end right before the next delimiter line.
    if (!r.has(end, `\r\n${delimiter}`)) throw new NotFound();
    line = r.delimiter(end + 2, delimiter);
  }
  if (!r.has(line.at, `${delimiter}--`)) throw new NotFound();
  return line.next;
}

/** The pieces of `root` from the two ends of the source, or undefined when the ends do not hold them all. */
export function piecesFromEnds(root: MultipartNode, ends: Ends): EndPieces | undefined {
  const r = new Reader(ends);
  const out: EndPieces = { header: Buffer.alloc(0), parts: new Map(), heads: new Map() };
  try {
    const body = r.contentStart(0);
    out.header = r.bytes(0, body);
    walk(root, body, r, out);
    return out;
  } catch (err) {
    if (err instanceof NotFound) return undefined;
    throw err;
  }
}
