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

/**
 * Comments, `<!…>`/`<?…>` constructs and the start of an element (`<name` or `</name`). The rest of
 * an element tag (its attributes, quoted values skipped) is scanned by TagScanner, not by the
 * regex: a repeated group over attribute characters backtracks once per character, and a 10 MB
 * attribute run overflowed the regex stack.
 */
const TAG_RE = /<!--[\s\S]*?(?:-->|$)|<[!?][^>]*>?|<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)/g;

/**
 * Where the attributes of an element tag end: the next `>` outside quotes (consumed), or before a
 * quote that is never closed (as `"[^"]*"` would stop there). Quote positions are cached and the
 * scan only moves forward, so the whole document costs one pass however its tags are written.
 */
class TagScanner {
  private readonly nextQuote = new Map<number, number>();
  constructor(private readonly html: string) {}

  private quote(q: number, from: number): number {
    const known = this.nextQuote.get(q);
    if (known === -1 || (known !== undefined && known >= from)) return known;
    const at = this.html.indexOf(String.fromCharCode(q), from);
    this.nextQuote.set(q, at);
    return at;
  }

  /** Where the attributes starting at `from` end (exclusive), set by scan. */
  attributesEnd = 0;

  /** Index after the tag whose attributes start at `from`; their end goes to attributesEnd (no copy is made). */
  scan(from: number): number {
    const { html } = this;
    for (let i = from; i < html.length; i++) {
      const c = html.charCodeAt(i);
      if (c === 62) {
        this.attributesEnd = i;
        return i + 1;
      }
      if (c !== 34 && c !== 39) continue;
      const close = this.quote(c, i + 1);
      if (close === -1) {
        this.attributesEnd = i;
        return i;
      }
      i = close;
    }
    this.attributesEnd = html.length;
    return html.length;
  }

  /** The attributes of the last scanned tag end with `/` (a self-closing tag). */
  selfClosing(from: number): boolean {
    return this.attributesEnd > from && this.html.charCodeAt(this.attributesEnd - 1) === 47;
  }
}

const PARAGRAPH = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'dl', 'table', 'pre', 'blockquote', 'figure']);
const LINE = new Set([
  'div',
  'tr',
  'li',
  'dt',
  'dd',
  'section',
  'article',
  'header',
  'footer',
  'nav',
  'aside',
  'main',
  'form',
  'address',
  'center',
  'fieldset',
  'legend',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'figcaption',
  'details',
  'summary',
  'body',
  'html',
]);
const SKIP = new Set(['script', 'style', 'head', 'title', 'template', 'noscript', 'xml', 'svg', 'object']);

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
  cur: string;
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

/** End the current line (kept even when empty, as `<br><br>` asks). */
function flush(st: State): void {
  const text = trimSpacesEnd(st.cur);
  st.cur = '';
  const last = st.lines[st.lines.length - 1];
  if (st.blank && text !== '' && last !== undefined && last.text !== '') st.lines.push({ text: '', quote: Math.min(last.quote, st.quote) });
  if (text !== '') st.blank = false;
  if (text !== '' || !st.blank) st.lines.push({ text, quote: st.quote });
}

function lineBreak(st: State): void {
  if (st.cur.trim() !== '') flush(st);
  else st.cur = '';
}

function paragraphBreak(st: State): void {
  lineBreak(st);
  st.blank = true;
}

function render(lines: Line[]): string {
  const out: string[] = [];
  for (const l of lines) {
    const prefix = l.quote > 0 ? '> '.repeat(Math.min(MAX_QUOTE_PREFIX, l.quote)) : '';
    out.push(l.text === '' ? prefix.trimEnd() : prefix + l.text);
  }
  return out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const WS_RE = /\s+/g;
/** Sticky: how far whitespace runs from lastIndex (text between tags is often only a line break). */
const WS_ONLY_RE = /\s*/y;

function addText(st: State, raw: string): void {
  if (raw === '') return;
  if (st.pre > 0) {
    const parts = decodeEntities(raw).split(/\r?\n/);
    parts.forEach((p, i) => {
      if (i > 0) flush(st);
      st.cur += p;
    });
    return;
  }
  // \s covers U+00A0, so &nbsp; collapses like any other space.
  let t = (raw.includes('&') ? decodeEntities(raw) : raw).replace(WS_RE, ' ');
  const atStart = st.cur === '' || st.cur.charCodeAt(st.cur.length - 1) === 32;
  if (atStart && t.charCodeAt(0) === 32) t = t.slice(1);
  st.cur += t;
}

function openTag(st: State, name: string): void {
  if (name === 'br') return flush(st);
  if (name === 'hr') {
    paragraphBreak(st);
    st.cur = '---';
    return paragraphBreak(st);
  }
  if (name === 'td' || name === 'th') {
    if (st.cur !== '' && !st.cur.endsWith(' ')) st.cur += ' ';
    return;
  }
  if (PARAGRAPH.has(name)) paragraphBreak(st);
  else if (LINE.has(name)) lineBreak(st);
  if (name === 'blockquote') st.quote++;
  else if (name === 'pre') st.pre++;
  else if (name === 'ul' || name === 'ol') st.lists.push({ ordered: name === 'ol', n: 0 });
  else if (name === 'li') {
    const list = st.lists[st.lists.length - 1];
    const indent = '  '.repeat(Math.min(MAX_LIST_INDENT, Math.max(0, st.lists.length - 1)));
    st.cur = list?.ordered === true ? `${indent}${++list.n}. ` : `${indent}- `;
  }
}

function closeTag(st: State, name: string): void {
  if (PARAGRAPH.has(name)) paragraphBreak(st);
  else if (LINE.has(name)) lineBreak(st);
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
  const st: State = { lines: [], cur: '', quote: 0, pre: 0, blank: false, lists: [] };
  const unclosed = new Set<string>();
  let last = 0;
  const tags = new TagScanner(html);
  TAG_RE.lastIndex = 0;
  for (let m = TAG_RE.exec(html); m !== null; m = TAG_RE.exec(html)) {
    const attributesStart = TAG_RE.lastIndex;
    if (m[2] !== undefined) TAG_RE.lastIndex = tags.scan(attributesStart);
    if (m.index > last) {
      WS_ONLY_RE.lastIndex = last;
      WS_ONLY_RE.test(html);
      if (WS_ONLY_RE.lastIndex === m.index && st.pre === 0) {
        if (st.cur !== '' && st.cur.charCodeAt(st.cur.length - 1) !== 32) st.cur += ' ';
      } else addText(st, html.slice(last, m.index));
    }
    last = TAG_RE.lastIndex;
    if (m[2] === undefined) continue; // comment, doctype, processing instruction
    const name = m[2].toLowerCase();
    if (m[1] === '/') {
      closeTag(st, name);
      continue;
    }
    if (SKIP.has(name) && !tags.selfClosing(attributesStart)) {
      const after = skipElement(html, name, last, unclosed);
      if (after >= 0) last = TAG_RE.lastIndex = after;
      continue;
    }
    openTag(st, name);
  }
  addText(st, html.slice(last));
  lineBreak(st);
  return render(st.lines);
}
