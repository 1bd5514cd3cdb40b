/**
 * HTML -> readable plain text, in one linear pass over the tags (no DOM).
 *
 * Block elements end lines (paragraphs, headings, lists, tables and blockquotes leave a
 * blank line), `<br>` breaks a line, list items get `- ` (or `1. ` in ordered lists),
 * table cells are separated by a space, `<hr>` becomes `---`, whitespace collapses
 * except in `<pre>`, entities are decoded, script/style/head/title and comments are
 * dropped, and blockquote content is kept with `> ` per quote level so quote removal
 * can find it.
 */
import { decodeEntities } from './entities.js';
import { TagScanner, blankBetween, collapseSpaces, nextTag, type Tag } from './html-scan.js';
import { knownTag, type KnownTag } from './html-tags.js';

/**
 * Nesting shown at most this deep: list indentation and `> ` prefixes are written per line, so
 * thousands of unclosed <ul> or <blockquote> would make the text grow with the square of them.
 */
const MAX_LIST_INDENT = 16;
const MAX_QUOTE_PREFIX = 32;

interface Line {
  text: string;
  quote: number;
}

interface State {
  lines: Line[];
  /**
   * The line being written. Only ever appended to, replaced or ended: reading a character of it
   * would flatten V8's concatenation rope each time, a copy of the whole line per tag (quadratic
   * on long single-line HTML), so its last character is kept in `end` instead.
   */
  cur: string;
  /** Char code of the last character of `cur`, -1 when `cur` is empty. */
  end: number;
  quote: number;
  pre: number;
  /** A paragraph break is owed: one blank line before the next line with content. */
  blank: boolean;
  lists: Array<{ ordered: boolean; n: number }>;
}

/** `s` less trailing spaces and tabs, in one pass (/[ \t]+$/ is quadratic on a long inner run). */
function trimSpacesEnd(s: string): string {
  let end = s.length;
  while (end > 0 && (s.charCodeAt(end - 1) === 32 || s.charCodeAt(end - 1) === 9)) end--;
  return s.slice(0, end);
}

/** Appends `s` to the current line. */
function append(st: State, s: string): void {
  if (s === '') return;
  st.cur += s;
  st.end = s.charCodeAt(s.length - 1);
}

/** Replaces the current line with `s`. */
function setLine(st: State, s: string): void {
  st.cur = s;
  st.end = s === '' ? -1 : s.charCodeAt(s.length - 1);
}

/** End the current line (kept even when empty, as `<br><br>` asks). */
function flush(st: State): void {
  const text = trimSpacesEnd(st.cur);
  setLine(st, '');
  const last = st.lines[st.lines.length - 1];
  if (st.blank && text !== '' && last !== undefined && last.text !== '') st.lines.push({ text: '', quote: Math.min(last.quote, st.quote) });
  if (text !== '') st.blank = false;
  if (text !== '' || !st.blank) st.lines.push({ text, quote: st.quote });
}

function lineBreak(st: State): void {
  if (st.cur.trim() !== '') flush(st);
  else setLine(st, '');
}

function paragraphBreak(st: State): void {
  lineBreak(st);
  st.blank = true;
}

function render(lines: Line[]): string {
  const out: string[] = [];
  // Lines hold no line break, so three in a row need two empty lines in a row.
  let emptyRun = 0;
  let runs = false;
  for (const l of lines) {
    const prefix = l.quote > 0 ? '> '.repeat(Math.min(MAX_QUOTE_PREFIX, l.quote)) : '';
    const line = l.text === '' ? prefix.trimEnd() : prefix + l.text;
    emptyRun = line === '' ? emptyRun + 1 : 0;
    if (emptyRun === 2) runs = true;
    out.push(line);
  }
  const text = out.join('\n');
  return (runs ? text.replace(/\n{3,}/g, '\n\n') : text).trim();
}

function addText(st: State, raw: string): void {
  if (raw === '') return;
  if (st.pre > 0) {
    const parts = decodeEntities(raw).split(/\r?\n/);
    parts.forEach((p, i) => {
      if (i > 0) flush(st);
      append(st, p);
    });
    return;
  }
  // \s covers U+00A0, so &nbsp; collapses like any other space.
  let t = collapseSpaces(raw.includes('&') ? decodeEntities(raw) : raw);
  const atStart = st.end === -1 || st.end === 32;
  if (atStart && t.charCodeAt(0) === 32) t = t.slice(1);
  append(st, t);
}

function openTag(st: State, tag: KnownTag): void {
  const { name } = tag;
  if (name === 'br') return flush(st);
  if (name === 'hr') {
    paragraphBreak(st);
    setLine(st, '---');
    return paragraphBreak(st);
  }
  if (name === 'td' || name === 'th') {
    if (st.end !== -1 && st.end !== 32) append(st, ' ');
    return;
  }
  if (tag.paragraph) paragraphBreak(st);
  else if (tag.line) lineBreak(st);
  if (name === 'blockquote') st.quote++;
  else if (name === 'pre') st.pre++;
  else if (name === 'ul' || name === 'ol') st.lists.push({ ordered: name === 'ol', n: 0 });
  else if (name === 'li') {
    const list = st.lists[st.lists.length - 1];
    const indent = '  '.repeat(Math.min(MAX_LIST_INDENT, Math.max(0, st.lists.length - 1)));
    setLine(st, list?.ordered === true ? `${indent}${++list.n}. ` : `${indent}- `);
  }
}

function closeTag(st: State, tag: KnownTag): void {
  const { name } = tag;
  if (tag.paragraph) paragraphBreak(st);
  else if (tag.line) lineBreak(st);
  if (name === 'blockquote' && st.quote > 0) {
    st.quote--;
    paragraphBreak(st);
  } else if (name === 'pre' && st.pre > 0) st.pre--;
  else if (name === 'ul' || name === 'ol') st.lists.pop();
}

const CLOSERS = new Map<string, RegExp>();

function closer(name: string): RegExp {
  let re = CLOSERS.get(name);
  if (re === undefined) {
    re = name === 'head' ? /<\/head\s*>|<body[\s>]/gi : new RegExp(`</${name}\\s*>`, 'gi');
    CLOSERS.set(name, re);
  }
  return re;
}

/**
 * Index after the element `name` that starts at `from`, or -1 when it is not closed.
 * `unclosed` remembers names already searched to the end in vain, so a document full of
 * unclosed `<script>` tags costs one scan, not one per tag.
 */
function skipElement(html: string, name: string, from: number, unclosed: Set<string>): number {
  if (unclosed.has(name)) return -1;
  const re = closer(name);
  re.lastIndex = from;
  const m = re.exec(html);
  if (m === null) {
    unclosed.add(name);
    return -1;
  }
  return m[0].startsWith('<body') ? m.index : m.index + m[0].length;
}

export function htmlToText(html: string): string {
  const st: State = { lines: [], cur: '', end: -1, quote: 0, pre: 0, blank: false, lists: [] };
  const unclosed = new Set<string>();
  let last = 0;
  const tags = new TagScanner(html);
  const tag: Tag = { start: 0, end: 0, nameStart: -1, closing: false };
  for (let from = 0; nextTag(html, from, tag); from = last) {
    const attributesStart = tag.end;
    const after = tag.nameStart < 0 ? tag.end : tags.scan(attributesStart);
    if (tag.start > last) {
      // Text between tags is often only a line break: one space at most, without a copy.
      if (st.pre === 0 && blankBetween(html, last, tag.start)) {
        if (st.end !== -1 && st.end !== 32) append(st, ' ');
      } else addText(st, html.slice(last, tag.start));
    }
    last = after;
    if (tag.nameStart < 0) continue; // comment, doctype, processing instruction
    const known = knownTag(html, tag.nameStart, tag.end);
    if (known === undefined) continue; // an element without a rule: its text is read on
    if (tag.closing) {
      closeTag(st, known);
      continue;
    }
    if (known.skip && !tags.selfClosing(attributesStart)) {
      const skipped = skipElement(html, known.name, last, unclosed);
      if (skipped >= 0) last = skipped;
      continue;
    }
    openTag(st, known);
  }
  addText(st, html.slice(last));
  lineBreak(st);
  return render(st.lines);
}
