/**
 * Line classification for quote removal. Each line of a reply gets one mark:
 * `e` empty, `q` quoted (`>`), `s` part of a splitter ("On … wrote:", a quoted header block,
 * "-----Original Message-----"), `f` a forwarded-message marker, `t` text.
 * Every line is looked at a bounded number of times, on a capped slice: linear in the input.
 */
import {
  FORWARD_FIRST,
  FORWARD_LAST,
  FORWARD_RE,
  INLINE_LEAD_RE,
  LEAD_START_RE,
  MAX_SCAN_LINE_CHARS,
  ON_WROTE_RE,
  ORIGINAL_MESSAGE_FIRST,
  ORIGINAL_MESSAGE_RE,
  RULE_LINE_FIRST,
  RULE_LINE_RE,
  endsLikeSplitter,
  headerLine,
  isAddressWrote,
  isDatePerson,
  mayLead,
  mayMatchAt,
} from './quote-patterns.js';

export type Mark = 'e' | 'q' | 's' | 'f' | 't';

/** Lines a wrapped "On … wrote:" may span. */
const MAX_SPLITTER_LINES = 3;
/** Lines a quoted header block may span before its second field must appear. */
const HEADER_WINDOW = 4;
/**
 * Lines a quoted header block spans at most. Real blocks are a handful of fields; without a
 * bound, a run of thousands of "Date: …" lines was rescanned from each of its lines (quadratic).
 */
export const MAX_HEADER_BLOCK_LINES = 64;

/** A quoted line: `>` (also nested), or Supercite's initials (`EL> …`). */
const QUOTE_RE = /^ {0,2}(?:[A-Z]{1,3})?>/;

/** Can QUOTE_RE match `line`? Its matches start with a space, a capital letter or `>`. */
function mayQuote(line: string): boolean {
  const c = line.charCodeAt(0);
  return c === 32 || c === 62 || (c >= 65 && c <= 90);
}

function isQuoted(line: string): boolean {
  return mayQuote(line) && QUOTE_RE.test(line);
}
const KEY_VALUE_RE = /^\s*[\p{L}][\p{L} -]{0,24}:\s/u;
const QUOTE_PREFIX_RE = /^(?: {0,2}(?:[A-Z]{1,3})?>)+ ?/;

function cap(line: string): string {
  return (line.length > MAX_SCAN_LINE_CHARS ? line.slice(0, MAX_SCAN_LINE_CHARS) : line).trim();
}

/** True when the line holds only whitespace (no allocation). */
function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 160 && c !== 13 && c !== 12 && c !== 11) return false;
  }
  return true;
}

/** Lines (1..3) an "On … wrote:"-style splitter starting at `i` spans, or 0 (`first`: line `i` capped and trimmed). */
function wroteSplitter(lines: readonly string[], i: number, first: string): number {
  const led = mayLead(first) && LEAD_START_RE.test(first);
  const c = first.charCodeAt(0);
  const wraps = led || (c >= 48 && c <= 57) || first.includes('@') || first.endsWith('<');
  if (!wraps) return 0;
  let joined = first;
  for (let k = 1; k <= MAX_SPLITTER_LINES; k++) {
    if (k > 1) {
      const next = lines[i + k - 1];
      if (next === undefined || isBlank(next) || isQuoted(next)) return 0;
      joined = `${joined} ${cap(next)}`;
    }
    if (endsLikeSplitter(joined) || joined.endsWith('>')) {
      if (led && ON_WROTE_RE.test(joined)) return k;
      if (isAddressWrote(joined) || isDatePerson(joined)) return k;
    }
  }
  return 0;
}

/** A sender as clients write it: an address, or a name that starts with a capital letter or a quote. */
const SENDER_RE = /@|^["'(<*]|^\p{Lu}/u;
/** A date as clients write it always holds a digit (a day, a year, a time). */
const DATED_RE = /\d/;

/** What a run of header lines must hold to be a quoted header block, not ordinary text. */
interface BlockEvidence {
  fields: number;
  /** A From line whose value reads as a sender. */
  sender: boolean;
  /** A field holds an address. */
  address: boolean;
  /** A Date/Sent line whose value holds a digit. */
  dated: boolean;
}

function note(evidence: BlockEvidence, h: { kind: string; value: string }): void {
  evidence.fields += 1;
  if (h.kind === 'from' && SENDER_RE.test(h.value)) evidence.sender = true;
  if (h.value.includes('@')) evidence.address = true;
  if (h.kind === 'date' && DATED_RE.test(h.value)) evidence.dated = true;
}

/**
 * A real quoted header block: a sender (From: with an address or a capitalised name) with a
 * date (Sent:/Date: holding a digit), an address or at least two more fields; or, without a
 * From line, a date and an address ("Date: Wed, 16 May 2012 … / To: bob@example.com").
 * "From: the warehouse / Date: tomorrow" in running text is none.
 */
function isRealBlock(e: BlockEvidence): boolean {
  if (e.fields < 2) return false;
  return e.sender ? e.dated || e.address || e.fields >= 3 : e.dated && e.address;
}

/** Lines a quoted header block starting at `i` spans (`From: … Sent: … To: … Subject: …`), or 0. */
function headerBlock(lines: readonly string[], i: number, prevBlank: boolean): number {
  const first = headerLine(lines[i]!);
  if (!first || first.kind === 'other') return 0;
  // Inside a listing of other "Key: value" lines (a bounce, a moderation notice) it is data, not a quote.
  const above = i > 0 ? lines[i - 1]! : '';
  if (KEY_VALUE_RE.test(above) && !headerLine(above)) return 0;
  const evidence: BlockEvidence = { fields: 0, sender: false, address: false, dated: false };
  note(evidence, first);
  let end = i + 1;
  let loose = 0;
  for (let j = i + 1; j < lines.length && j <= end + HEADER_WINDOW && j < i + MAX_HEADER_BLOCK_LINES; j++) {
    const line = lines[j]!;
    if (isBlank(line)) break;
    const h = headerLine(line);
    if (h) {
      note(evidence, h);
      end = j + 1;
      loose = 0;
    } else if (++loose > 1) break;
  }
  if (isRealBlock(evidence)) return end - i;
  // A lone "From: someone@example.com" after a blank line is a header block cut short.
  return first.kind === 'from' && prevBlank && first.value.includes('@') ? 1 : 0;
}

/** Blank lines allowed between a rule line and the header block under it (an HTML `<hr>` leaves one). */
const RULE_GAP_LINES = 2;

/** Lines a splitter starting at line `i` spans (0 when none starts there); `head` is that line capped and trimmed. */
export function splitterAt(lines: readonly string[], i: number, prevBlank: boolean, head = cap(lines[i]!)): number {
  if (mayMatchAt(ORIGINAL_MESSAGE_FIRST, head, 0) && ORIGINAL_MESSAGE_RE.test(head)) return 1;
  if (mayMatchAt(RULE_LINE_FIRST, head, 0) && RULE_LINE_RE.test(head)) {
    let j = i + 1;
    while (j < lines.length && j <= i + RULE_GAP_LINES && isBlank(lines[j]!)) j++;
    const n = j < lines.length ? headerBlock(lines, j, true) : 0;
    return n > 0 ? n + j - i : 0;
  }
  return headerBlock(lines, i, prevBlank) || wroteSplitter(lines, i, head);
}

/**
 * Splits a line where an "On … wrote:" starts after reply text ("thanks! On Wed, … wrote:").
 * Returns [text before, splitter] or undefined.
 */
export function inlineSplitter(line: string): [string, string] | undefined {
  if (line.length > MAX_SCAN_LINE_CHARS || isQuoted(line) || !endsLikeSplitter(line.trimEnd())) return undefined;
  INLINE_LEAD_RE.lastIndex = 0;
  for (let m = INLINE_LEAD_RE.exec(line); m; m = INLINE_LEAD_RE.exec(line)) {
    const rest = line.slice(m.index + 1);
    if (ON_WROTE_RE.test(rest.trim())) {
      const before = line.slice(0, m.index + 1).replace(/[\s-]+$/, '');
      if (before.trim() !== '') return [before, rest.trim()];
    }
  }
  return undefined;
}

/** Marks every line; splitters found inside quotes (`> From: …`) count as splitters. */
export function markLines(lines: readonly string[]): Mark[] {
  const marks: Mark[] = new Array<Mark>(lines.length);
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const prevBlank = i === 0 || marks[i - 1] === 'e';
    if (isBlank(line)) {
      marks[i++] = 'e';
      continue;
    }
    if (isQuoted(line)) {
      const n = marks[i - 1] === 'q' || marks[i - 1] === 's' ? 0 : quotedSplitter(lines, i);
      for (let k = 0; k < Math.max(n, 1); k++) marks[i + k] = n > 0 ? 's' : 'q';
      i += Math.max(n, 1);
      continue;
    }
    const head = cap(line);
    if (mayMatchAt(FORWARD_FIRST, head, 0) && mayMatchAt(FORWARD_LAST, head, head.length - 1) && FORWARD_RE.test(head)) {
      marks[i++] = 'f';
      continue;
    }
    const n = splitterAt(lines, i, prevBlank, head);
    for (let k = 0; k < Math.max(n, 1); k++) marks[i + k] = n > 0 ? 's' : 't';
    i += Math.max(n, 1);
  }
  return marks;
}

/** A splitter written inside the first lines of a quote (`> From: …` / `> On … wrote:`). */
function quotedSplitter(lines: readonly string[], i: number): number {
  const window: string[] = [];
  for (let j = i; j < lines.length && j < i + HEADER_WINDOW + 2 && isQuoted(lines[j]!); j++) {
    window.push(lines[j]!.replace(QUOTE_PREFIX_RE, ''));
  }
  if (window.length === 0 || isBlank(window[0]!)) return 0;
  return splitterAt(window, 0, true);
}
