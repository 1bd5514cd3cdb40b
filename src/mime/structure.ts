/**
 * The MIME tree of a message, as byte ranges into the raw input (nothing decoded here).
 *
 * Multipart bodies are split with Buffer.indexOf on `--boundary`; a delimiter counts only
 * at the start of a line and when followed by `--`, whitespace or a line break. Bounds:
 * MAX_MIME_DEPTH nested multiparts and MAX_MIME_PARTS parts per message; beyond them the
 * rest is ignored with MAILGATE_WARN_MIME_MALFORMED.
 */
import { warning, type Warning } from '../errors.js';
import { MAX_MIME_DEPTH, MAX_MIME_PARTS } from '../limits.js';
import { getHeader } from './headers.js';
import { splitHeader } from './header-split.js';
import { omittedSize } from './omitted.js';
import { parseStructured } from './params.js';
import { transferEncoding, type TransferEncoding } from './transfer.js';
import type { HeaderField } from './types.js';

export interface MimePart {
  /** Lowercased `type/subtype`. */
  type: string;
  params: Record<string, string>;
  /** Lowercased disposition (`inline`, `attachment`) when present. */
  disposition?: string;
  /** File name from Content-Disposition `filename`, else Content-Type `name`. */
  name?: string;
  contentId: boolean;
  encoding: TransferEncoding;
  /** Byte range of the (still encoded) content. */
  start: number;
  end: number;
  /** Decoded size declared by an `X-Mailgate-Omitted-Size` marker on a stub part (see omittedSize). */
  omittedSize?: number;
  children?: MimePart[];
}

export interface ParseContext {
  buf: Buffer;
  parts: number;
  warnings: Warning[];
  limitWarned: boolean;
}

const LF = 10;
const CR = 13;

function malformed(ctx: ParseContext, message: string): void {
  if (ctx.warnings.length < 32) ctx.warnings.push(warning('MAILGATE_WARN_MIME_MALFORMED', message));
}

const TYPE_RE = /^\s*([a-z0-9!#$&^_.+-]+)\s*\/\s*([a-z0-9!#$&^_.+-]+)/i;

interface ContentType {
  type: string;
  params: Record<string, string>;
}

/**
 * Content-Type values read before, by their text: the parts of most mail repeat a few
 * (`text/plain; charset=utf-8`). Kept only when reading them could not warn (no encoded word, no
 * RFC 2231 parameter) and not for multipart (each carries its own boundary); their parameters
 * are frozen, since every part reading that value shares them. Bounded, so senders cannot grow it.
 */
const TYPES = new Map<string, ContentType>();
const MAX_TYPES = 256;
const MAX_TYPE_CHARS = 200;

function contentType(value: string | undefined, defaultType: string, warnings: Warning[] | undefined): ContentType {
  if (value === undefined || value.trim() === '') return { type: defaultType, params: Object.create(null) as Record<string, string> };
  const known = TYPES.get(value);
  if (known !== undefined) return known;
  const m = TYPE_RE.exec(value);
  if (m === null) {
    const s = parseStructured(value, warnings);
    const type = s.value.startsWith('multipart')
      ? 'multipart/mixed'
      : s.value.startsWith('text') || s.value === ''
        ? 'text/plain'
        : 'application/octet-stream';
    return { type, params: s.params };
  }
  // `text/plain charset=us-ascii` (a missing `;`): what follows the type is read as parameters too.
  const rest = value.slice(m[0].length);
  const params = parseStructured(/^[\s,]*;/.test(rest) ? `x${rest}` : `x;${rest}`, warnings).params;
  const ct = { type: `${m[1]}/${m[2]}`.toLowerCase(), params };
  if (TYPES.size < MAX_TYPES && value.length <= MAX_TYPE_CHARS && !ct.type.startsWith('multipart/') && !/=\?|\*/.test(value)) {
    // A fresh string as the key: a slice would keep the whole header text it was cut from alive.
    TYPES.set(`${value}\0`.slice(0, -1), { type: ct.type, params: Object.freeze(params) });
  }
  return ct;
}

/** Build a part from its header fields and the byte range of its content; charset fallbacks in parameters warn into `warnings`. */
export function makePart(fields: HeaderField[], start: number, end: number, defaultType: string, warnings?: Warning[]): MimePart {
  const ct = contentType(getHeader(fields, 'content-type'), defaultType, warnings);
  const cd = getHeader(fields, 'content-disposition');
  const disp = cd === undefined ? undefined : parseStructured(cd, warnings);
  const name = disp?.params.filename ?? ct.params.name;
  const part: MimePart = {
    type: ct.type,
    params: ct.params,
    contentId: getHeader(fields, 'content-id') !== undefined,
    encoding: transferEncoding(getHeader(fields, 'content-transfer-encoding')),
    start,
    end,
  };
  if (disp !== undefined && disp.value !== '') part.disposition = disp.value;
  if (name !== undefined && name.trim() !== '') part.name = name.trim();
  return part;
}

/** Is there a delimiter line `--boundary` at `at` (already matched), and where does its line end? */
function delimiterEnd(buf: Buffer, at: number, len: number, end: number): { close: boolean; next: number } | undefined {
  let k = at + len;
  const close = buf[k] === 45 && buf[k + 1] === 45 && k + 1 < end;
  if (close) k += 2;
  else if (k < end && buf[k] !== CR && buf[k] !== LF && buf[k] !== 32 && buf[k] !== 9) return undefined;
  const nl = buf.indexOf(LF, k);
  return { close, next: nl < 0 || nl >= end ? end : nl + 1 };
}

/** Content end before a delimiter found at `at`: the line break before it belongs to the delimiter. */
function contentEnd(buf: Buffer, at: number, floor: number): number {
  let e = at;
  if (e > floor && buf[e - 1] === LF) e--;
  if (e > floor && buf[e - 1] === CR) e--;
  return e;
}

/** Split buf[start, end) at `--boundary` lines; returns content ranges of the body parts. */
function splitMultipart(ctx: ParseContext, start: number, end: number, boundary: string): Array<[number, number]> | undefined {
  const { buf } = ctx;
  const delim = Buffer.from(`--${boundary}`, 'latin1');
  const ranges: Array<[number, number]> = [];
  let partStart = -1;
  let pos = start;
  let closed = false;
  while (pos < end) {
    const at = buf.indexOf(delim, pos);
    if (at < 0 || at + delim.length > end) break;
    const d = at === start || buf[at - 1] === LF ? delimiterEnd(buf, at, delim.length, end) : undefined;
    if (d === undefined) {
      pos = at + 1;
      continue;
    }
    if (partStart >= 0) ranges.push([partStart, contentEnd(buf, at, partStart)]);
    partStart = d.next;
    pos = d.next;
    if (d.close) {
      closed = true;
      break;
    }
  }
  if (partStart < 0) return undefined;
  if (!closed) {
    malformed(ctx, `multipart body has no closing boundary "--${boundary.slice(0, 70)}--"; the last part runs to the end`);
    if (partStart < end) ranges.push([partStart, end]);
  }
  return ranges;
}

/** Guess the boundary of a multipart without one: the first `--token` line of its body. */
function guessBoundary(buf: Buffer, start: number, end: number): string | undefined {
  let pos = start;
  for (let i = 0; i < 1000 && pos < end; i++) {
    const nl = buf.indexOf(LF, pos);
    const lineEnd = nl < 0 || nl > end ? end : nl;
    if (buf[pos] === 45 && buf[pos + 1] === 45) {
      const token = buf.toString('latin1', pos + 2, Math.min(lineEnd, pos + 200)).trimEnd();
      if (token.trim().length > 0) return token.endsWith('--') ? token.slice(0, -2) : token;
    }
    pos = lineEnd + 1;
  }
  return undefined;
}

function overLimit(ctx: ParseContext, what: string): boolean {
  if (!ctx.limitWarned) malformed(ctx, `${what}; the rest of the structure is ignored`);
  ctx.limitWarned = true;
  return true;
}

/** Expand a multipart part in place: split its content into child parts, recursively. */
export function expand(ctx: ParseContext, part: MimePart, depth: number): void {
  if (!part.type.startsWith('multipart/')) return;
  if (depth >= MAX_MIME_DEPTH) {
    overLimit(ctx, `multipart nesting deeper than ${MAX_MIME_DEPTH}`);
    part.type = 'application/octet-stream';
    return;
  }
  let boundary = part.params.boundary;
  if (boundary === undefined || boundary === '') {
    boundary = guessBoundary(ctx.buf, part.start, part.end);
    malformed(
      ctx,
      boundary === undefined
        ? `${part.type} without a boundary parameter; read as text`
        : `${part.type} without a boundary parameter; used the first "--" line`,
    );
  }
  let ranges = boundary === undefined ? undefined : splitMultipart(ctx, part.start, part.end, boundary);
  if (ranges === undefined && boundary !== undefined && part.params.boundary !== undefined) {
    const guess = guessBoundary(ctx.buf, part.start, part.end);
    malformed(
      ctx,
      guess === undefined
        ? `${part.type} boundary never occurs; body read as text`
        : `${part.type} boundary never occurs; used the first "--" line`,
    );
    if (guess !== undefined) ranges = splitMultipart(ctx, part.start, part.end, guess);
  }
  if (ranges === undefined) {
    part.type = 'text/plain';
    return;
  }
  const childDefault = part.type === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
  part.children = [];
  for (const [s, e] of ranges) {
    if (++ctx.parts > MAX_MIME_PARTS) {
      overLimit(ctx, `more than ${MAX_MIME_PARTS} MIME parts`);
      break;
    }
    const h = splitHeader(ctx.buf, s, e);
    if (h.folded > 0)
      malformed(ctx, `${h.folded} line(s) in a part's header block are not header fields; kept as continuation lines of the field above`);
    const child = makePart(h.fields, h.bodyStart, e, childDefault, ctx.warnings);
    if (!child.type.startsWith('multipart/') && !child.type.startsWith('message/')) {
      const omitted = omittedSize(h.fields, ctx.buf, h.bodyStart, e);
      if (omitted !== undefined) child.omittedSize = omitted;
    }
    part.children.push(child);
    expand(ctx, child, depth + 1);
  }
}
