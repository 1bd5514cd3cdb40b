/**
 * Header fields: splitting a header block into fields, lookups, and (re-exported here so
 * callers need one import) encoded-words, addresses, dates and message ids.
 */
import type { HeaderField } from './types.js';
import { isSpace } from './spaces.js';

export { decodeWords } from './encoded-words.js';
export { parseAddressList, formatAddress, type Address } from './address.js';
export { parseDate } from './date.js';
export { firstMessageId, parseMessageIds } from './message-ids.js';

/** The name of a header line, or undefined when the line is not a field. */
export function fieldName(line: string): string | undefined {
  const colon = colonAt(line, 0, line.length);
  return colon < 0 ? undefined : nameBefore(line, 0, colon);
}

// eslint-disable-next-line no-control-regex -- the ASCII range starts at NUL: any byte above 0x7f is non-ASCII.
const NON_ASCII_RE = /[^\x00-\x7f]/;

/** True when a field name holds a character outside ASCII. */
export function isNonAsciiName(name: string): boolean {
  return NON_ASCII_RE.test(name);
}

function makeField(name: string, first: string, rest: string[] | undefined): HeaderField {
  let value = first.slice(first.indexOf(':') + 1);
  if (rest !== undefined) value += rest.join('');
  return { name, key: name.toLowerCase(), value: value.trim(), raw: rest === undefined ? first : `${first}\n${rest.join('\n')}` };
}

/** Rebuild a field from its (re-decoded) raw lines. */
export function fieldFromRaw(raw: string): HeaderField | undefined {
  const lines = raw.split('\n');
  const name = fieldName(lines[0]!);
  return name === undefined ? undefined : makeField(name, lines[0]!, lines.length > 1 ? lines.slice(1) : undefined);
}

/**
 * What a line that is neither a field nor a continuation (a "stray" line) does:
 * `skip` — it is ignored; `end` — it ends the scan (the body starts there);
 * `fold` — the text scanned ends at a blank line, and when the lines from the first stray
 * line to that blank line look like header fields (see foldsStrayLines), every stray line is
 * kept as a continuation of the field above it (a space is put before it); otherwise `end`.
 */
export type StrayLineRule = 'skip' | 'end' | 'fold';

export interface HeaderScan {
  fields: HeaderField[];
  /** Offset where the scan stopped (start of the blank or stray line, or the end of the text). */
  end: number;
  /** Stray lines kept as continuation lines (rule `fold`). */
  folded: number;
  /**
   * The fields' raw lines joined with `\n` are exactly `text.slice(0, rawEnd)`: every line read
   * was kept as written and ended by a bare LF (no CR dropped, no stray line folded or skipped).
   */
  contiguous: boolean;
  /** End of the last field's last line (meaningful when `contiguous`). */
  rawEnd: number;
}

/**
 * Rule `fold`, decided once at the first stray line (at `pos`): over the lines from it to the
 * end of the text, header fields are at least as many as stray lines, and the last line that is
 * not a continuation is a header field. One pass over the rest of the block.
 */
function foldsStrayLines(text: string, pos: number): boolean {
  let fields = 0;
  let stray = 0;
  let lastIsField = false;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = text.length;
    const e = nl > pos && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
    if (e === pos) break;
    const c = text.charCodeAt(pos);
    if (c !== 32 && c !== 9) {
      lastIsField = colonAt(text, pos, e) >= 0;
      if (lastIsField) fields++;
      else stray++;
    }
    pos = nl + 1;
  }
  return lastIsField && fields >= stray;
}

/**
 * Offset of the colon after the field name of the line text[pos, end) (`Name: value`, obsolete
 * `Name : value` too), or -1 when the line is not a field. A name is printable ASCII or 8-bit
 * characters (a non-ASCII name is still a field; `parsed` headers refuse it). Stops at the first
 * character that cannot be part of a name, so a long line without a colon costs little.
 */
function colonAt(text: string, pos: number, end: number): number {
  let i = pos;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 58) break;
    if (c === 32 || c === 9) {
      let k = i;
      while (k < end && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9)) k++;
      return k < end && text.charCodeAt(k) === 58 && i > pos ? k : -1;
    }
    if (c < 33 || c === 127) return -1;
  }
  return i < end && i > pos ? i : -1;
}

/** The field name of the line starting at `start` whose colon is at `colon`: the text before it less the blanks that end it. */
function nameBefore(text: string, start: number, colon: number): string {
  let end = colon;
  while (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9) end--;
  return text.slice(start, end);
}

/**
 * The field whose first line starts at `start` (colon at `colon`, first line ending at
 * `firstEnd`, last at `lastEnd`); `joined` and `raw` when its lines are not one slice of text.
 */
function scannedField(
  text: string,
  start: number,
  colon: number,
  firstEnd: number,
  lastEnd: number,
  joined: string | undefined,
  raw: string | undefined,
): HeaderField {
  const name = nameBefore(text, start, colon);
  return {
    name,
    key: keyOf(name),
    value: joined === undefined ? trimmedSlice(text, colon + 1, firstEnd) : joined.trim(),
    raw: raw ?? text.slice(start, lastEnd),
  };
}

/** `text.slice(a, b).trim()`, without the untrimmed slice in between. */
function trimmedSlice(text: string, a: number, b: number): string {
  while (a < b && isSpace(text.charCodeAt(a))) a++;
  while (b > a && isSpace(text.charCodeAt(b - 1))) b--;
  return text.slice(a, b);
}

/**
 * Lowercased field names, shared: one string per name instead of one per field, and a shared
 * string's hash is computed once for every Set and Map lookup by key. Bounded, so names
 * chosen by senders cannot grow it without limit.
 */
const KEYS = new Map<string, string>();
const MAX_KEYS = 2048;

function keyOf(name: string): string {
  let key = KEYS.get(name);
  if (key === undefined) {
    key = name.toLowerCase();
    // Stored as fresh strings: a slice would keep the whole header text it was cut from alive.
    if (KEYS.size < MAX_KEYS) KEYS.set(`${name}\0`.slice(0, -1), `${key}\0`.slice(0, -1));
  }
  return key;
}

/**
 * Scan header lines (LF or CRLF) into fields, up to the first blank line; lines that are
 * neither a field nor a continuation are handled by `stray` (see StrayLineRule).
 *
 * A field's `raw` is the slice of `text` its lines span when they end in bare LFs and no stray
 * line was folded in; otherwise its lines are joined with `\n`. A one-line value is a slice too.
 */
export function scanHeaderFields(text: string, stray: StrayLineRule): HeaderScan {
  const fields: HeaderField[] = [];
  const len = text.length;
  let folding: boolean | undefined;
  let folded = 0;
  let contiguous = true;
  // The field being read: where it starts (-1: none), its colon, the ends of its first and last lines.
  let start = -1;
  let colon = 0;
  let firstEnd = 0;
  let lastEnd = 0;
  let lastCr = false; // the last line read ended in CR LF
  let joined: string | undefined; // unfolded value so far, once a continuation line was read
  let raw: string | undefined; // raw lines so far, once they are not one slice of text
  let pos = 0;
  while (pos < len) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = len;
    const cr = nl > pos && text.charCodeAt(nl - 1) === 13;
    const e = cr ? nl - 1 : nl;
    if (e === pos) break;
    const c = text.charCodeAt(pos);
    let piece: string | undefined; // a continuation line of the field being read
    if (c === 32 || c === 9) {
      if (start >= 0) piece = text.slice(pos, e);
      else if (stray !== 'skip') break;
      else contiguous = false;
    } else {
      const at = colonAt(text, pos, e);
      if (at >= 0) {
        if (start >= 0) fields.push(scannedField(text, start, colon, firstEnd, lastEnd, joined, raw));
        else if (pos !== 0) contiguous = false;
        if (lastCr) contiguous = false;
        start = pos;
        colon = at;
        firstEnd = e;
        lastEnd = e;
        joined = undefined;
        raw = undefined;
      } else if (stray === 'fold' && start >= 0 && (folding ??= foldsStrayLines(text, pos))) {
        piece = ` ${text.slice(pos, e)}`;
        folded++;
        contiguous = false;
        raw ??= text.slice(start, lastEnd);
      } else if (stray === 'skip') {
        if (start >= 0) fields.push(scannedField(text, start, colon, firstEnd, lastEnd, joined, raw));
        start = -1;
        contiguous = false;
      } else {
        break;
      }
    }
    if (piece !== undefined) {
      if (lastCr) {
        contiguous = false;
        raw ??= text.slice(start, lastEnd);
      }
      joined = (joined ?? text.slice(colon + 1, firstEnd)) + piece;
      if (raw !== undefined) raw += `\n${piece}`;
      lastEnd = e;
    }
    lastCr = cr;
    pos = nl + 1;
  }
  if (start >= 0) fields.push(scannedField(text, start, colon, firstEnd, lastEnd, joined, raw));
  return { fields, end: Math.min(pos, len), folded, contiguous, rawEnd: fields.length === 0 ? 0 : lastEnd };
}

/**
 * Split a header block (LF or CRLF line breaks) into fields: unfolded values, original
 * lines kept in `raw`. Stops at the first blank line; lines that are neither a field nor a
 * continuation are skipped (the message parser decides what such lines mean; see splitHeader).
 */
export function parseHeaderBlock(block: string): HeaderField[] {
  return scanHeaderFields(block, 'skip').fields;
}

/** The first field of that name (case-insensitive), or undefined. */
export function getHeader(headers: readonly HeaderField[], name: string): string | undefined {
  const key = name.toLowerCase();
  for (const h of headers) if (h.key === key) return h.value;
  return undefined;
}

/** Every field of that name, in order. */
export function getHeaders(headers: readonly HeaderField[], name: string): string[] {
  const key = name.toLowerCase();
  const out: string[] = [];
  for (const h of headers) if (h.key === key) out.push(h.value);
  return out;
}
