/**
 * Quote removal and signature split for the comment preview.
 *
 * `stripQuotes` removes the quoted history from a reply (the lines from "On … wrote:",
 * a quoted header block, "-----Original Message-----", a forwarded-message marker, or a
 * run of `>` lines); `splitReply` then moves the signature out of what is left.
 * The rules are documented in docs/preview.md. Work is linear in the input: each line is
 * classified once (a wrapped splitter looks at most three lines ahead) on a capped slice.
 */
import { isSpace } from '../mime/spaces.js';
import { type Mark, inlineSplitter, markLines } from './quote-marks.js';
import { splitSignatureOfLines } from './signature.js';

export interface ReplySplit {
  /** The visible reply: quoted history and signature removed. */
  body: string;
  /** The signature block, when one was found. */
  signature?: string;
}

/** Lines past this many are not classified: a reply that long keeps its tail as it is. */
export const MAX_QUOTE_SCAN_LINES = 20_000;

const LINK_OPEN_RE = /\(https?:\/\//;
const INLINE_VERB_RE = /wrote|writes|schrieb|schreibt|écrit|escrib|schreef|schrijft|geschreven|escrev|scritto|scrive|napisa|pisze|skrev/i;

/** The reply's lines; `source` is the text they were split from when they are its lines one for one. */
interface Exploded {
  lines: string[];
  source: string | undefined;
}

/** Splits lines where reply text and an "On … wrote:" share one line. */
function explode(text: string): Exploded {
  const source = text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
  const lines = source.split('\n');
  let out: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const last = lastCharCode(line);
    const split = (last === 58 || last === 45) && INLINE_VERB_RE.test(line) ? inlineSplitter(line) : undefined; // ':' or '-'
    if (split !== undefined && out === undefined) out = lines.slice(0, i);
    if (split !== undefined) out!.push(split[0], split[1]);
    else if (out !== undefined) out.push(line);
  }
  return out === undefined ? { lines, source } : { lines: out, source: undefined };
}

/** The last character that is not a space or tab, as a code (NaN when none). */
function lastCharCode(line: string): number {
  let i = line.length - 1;
  while (i >= 0 && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i--;
  return i < 0 ? Number.NaN : line.charCodeAt(i);
}

/** With no splitter anywhere, `>` lines only count as quotes when three come together. */
function demoteLoneQuotes(marks: Mark[]): void {
  if (marks.includes('s') || marks.includes('f')) return;
  let run = 0;
  for (const m of marks) {
    if (m === 'q') run += 1;
    else if (m !== 'e') run = 0;
    if (run >= 3) return;
  }
  for (let i = 0; i < marks.length; i++) if (marks[i] === 'q') marks[i] = 't';
}

/** Index of the first splitter directly followed (past splitters and blanks) by text, or -1. */
function splitterBeforeText(marks: readonly Mark[], end: number): number {
  for (let i = 0; i < end; i++) {
    if (marks[i] !== 's') continue;
    let j = i;
    while (j < end && (marks[j] === 's' || marks[j] === 'e')) j++;
    if (j < end && marks[j] === 't') return i;
    i = j - 1;
  }
  return -1;
}

/** A `>` block, then text, then `>` again: an inline reply (link continuations excepted). */
function hasInlineReply(lines: readonly string[], marks: readonly Mark[], end: number): boolean {
  let seenQuote = false;
  for (let i = 0; i < end; i++) {
    const m = marks[i];
    if (m === 'q') seenQuote = true;
    if (!seenQuote || m !== 't') continue;
    const prev = lines[i - 1] ?? '';
    if (marks[i - 1] === 'q' && (LINK_OPEN_RE.test(prev) || lines[i]!.trim().startsWith('(http'))) continue;
    let j = i;
    while (j < end && (marks[j] === 't' || marks[j] === 'e')) j++;
    if (j < end && marks[j] === 'q') return true;
    i = j - 1;
  }
  return false;
}

/** The line range [start, end) of the quotation inside lines [0, limit), if any. */
function quotation(marks: readonly Mark[], limit: number): [number, number] | undefined {
  let start = -1;
  let last = -1;
  for (let i = 0; i < limit; i++) {
    const m = marks[i];
    if (m === 's' || m === 'q') last = i;
    if (start >= 0) continue;
    if (m === 's') start = i;
    else if (m === 'q') {
      let j = i + 1;
      while (j < limit && marks[j] === 'e') j++;
      if (marks[j] === 'q') start = i;
    }
  }
  if (start < 0 || last < start) return undefined;
  let end = last + 1;
  while (end < limit && marks[end] === 'e') end++;
  return [start, end];
}

/** The reply with its quoted history removed. Returns the input unchanged when nothing would remain. */
export function stripQuotes(text: string): string {
  return stripToLines(text).text;
}

/** stripQuotes, with the lines of its result: `text` is `lines[from, to)` joined by `\n`. */
function stripToLines(text: string): Tidied {
  const { lines: all, source } = explode(text);
  const lines = all.length > MAX_QUOTE_SCAN_LINES ? all.slice(0, MAX_QUOTE_SCAN_LINES) : all;
  const marks = markLines(lines);
  demoteLoneQuotes(marks);
  const firstUsed = marks.findIndex((m) => m !== 'e');
  if (firstUsed >= 0 && marks[firstUsed] === 'f') return tidy(all, all.length, source);
  for (let i = 0; i < marks.length; i++) if (marks[i] === 'f') marks[i] = 's';

  const cut = splitterBeforeText(marks, marks.length);
  const limit = cut >= 0 ? cut : all.length;
  const q = hasInlineReply(lines, marks, Math.min(limit, marks.length)) ? undefined : quotation(marks, Math.min(limit, marks.length));
  let out: Tidied;
  if (q === undefined) out = tidy(all, limit, source);
  else {
    const kept = all.slice(0, limit);
    kept.splice(q[0], q[1] - q[0]);
    out = tidy(kept, kept.length, undefined);
  }
  return out.text === '' ? tidy(all, all.length, source) : out;
}

/** A text given with its lines: `text` is `lines[from, to)` joined by `\n` (each less its trailing whitespace when `trimEnds`). */
interface Tidied {
  text: string;
  lines: readonly string[];
  from: number;
  to: number;
  trimEnds: boolean;
}

/** Only `\s` characters (what trim() removes). */
function isBlankLine(line: string): boolean {
  for (let i = 0; i < line.length; i++) if (!isSpace(line.charCodeAt(i))) return false;
  return true;
}

function endsInSpace(line: string): boolean {
  return line.length > 0 && isSpace(line.charCodeAt(line.length - 1));
}

/**
 * Lines [0, to) less the blank lines at both ends, each less its trailing whitespace, joined by
 * `\n`. When the lines are `source`'s own (one for one), that text is made of slices of `source`:
 * one slice when no line ends in whitespace, else the runs between such lines, each of them cut
 * where its whitespace starts. Nothing is copied or joined, and the lines are handed on as they
 * are (`trimEnds`: the signature split trims the few it reads).
 */
function tidy(lines: readonly string[], to: number, source: string | undefined): Tidied {
  let a = 0;
  let b = to;
  while (a < b && isBlankLine(lines[a]!)) a++;
  while (b > a && isBlankLine(lines[b - 1]!)) b--;
  if (source !== undefined) {
    if (a === b) return { text: '', lines, from: a, to: b, trimEnds: false };
    let start = 0;
    for (let i = 0; i < a; i++) start += lines[i]!.length + 1;
    let text = '';
    let run = start; // where the text not yet taken starts
    let pos = start; // where line i starts
    for (let i = a; i < b; i++) {
      const l = lines[i]!;
      if (endsInSpace(l)) {
        text += source.slice(run, pos) + l.trimEnd();
        run = pos + l.length;
      }
      pos += l.length + 1;
    }
    text = run === start ? source.slice(start, pos - 1) : text + source.slice(run, pos - 1);
    return { text, lines, from: a, to: b, trimEnds: text.length !== pos - 1 - start };
  }
  const kept = new Array<string>(b - a);
  for (let i = a; i < b; i++) {
    const l = lines[i]!;
    kept[i - a] = endsInSpace(l) ? l.trimEnd() : l;
  }
  return { text: kept.join('\n'), lines: kept, from: 0, to: kept.length, trimEnds: false };
}

/** Quoted history removed, then the signature split off (see docs/preview.md). */
export function splitReply(text: string): ReplySplit {
  const stripped = stripToLines(text);
  return splitSignatureOfLines(stripped.text, stripped.lines, stripped.from, stripped.to, stripped.trimEnds);
}
