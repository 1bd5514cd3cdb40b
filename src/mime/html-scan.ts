/**
 * The markup scanner behind htmlToText: finds tags, comments and `<!…>`/`<?…>` constructs, the end
 * of a tag's attributes, and the whitespace rules of text, with plain character loops (no regex
 * backtracking, no match objects). Every scan moves forward only: one pass over the document.
 */
import { isSpace } from './spaces.js';

const BANG = 33;
const QUESTION = 63;
const SLASH = 47;

function isNameStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** `[a-zA-Z0-9:-]`: 0-9 and `:` are 48..58. */
function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 48 && c <= 58) || c === 45;
}

/** The next markup construct found by nextTag. */
export interface Tag {
  /** Index of its `<`. */
  start: number;
  /** Index after it: a comment or `<!…>`/`<?…>` whole, an element after its name (the attributes follow). */
  end: number;
  /** Index of the element name's first character (the name is `[nameStart, end)`); -1 for a comment, doctype or processing instruction. */
  nameStart: number;
  /** `</name`. */
  closing: boolean;
}

/**
 * The next comment (`<!--` to `-->` or the end), `<!…>`/`<?…>` construct (to `>` or the end) or
 * element start (`<name` or `</name`, name `[a-zA-Z][a-zA-Z0-9:-]*`) at or after `from`, into
 * `tag`; false when there is none. A `<` that starts none of them is text. Each character is
 * looked at once per call and calls only move forward: one pass over the document. The rest of
 * an element tag (its attributes, quoted values skipped) is read by TagScanner.
 */
export function nextTag(html: string, from: number, tag: Tag): boolean {
  for (let p = html.indexOf('<', from); p >= 0; p = html.indexOf('<', p + 1)) {
    const c = html.charCodeAt(p + 1);
    if (c === BANG || c === QUESTION) {
      let end: number;
      if (c === BANG && html.startsWith('--', p + 2)) {
        const close = html.indexOf('-->', p + 4);
        end = close < 0 ? html.length : close + 3;
      } else {
        const gt = html.indexOf('>', p + 2);
        end = gt < 0 ? html.length : gt + 1;
      }
      tag.start = p;
      tag.end = end;
      tag.nameStart = -1;
      tag.closing = false;
      return true;
    }
    const closing = c === SLASH;
    const nameStart = closing ? p + 2 : p + 1;
    if (!isNameStart(html.charCodeAt(nameStart))) continue;
    let i = nameStart + 1;
    while (i < html.length && isNameChar(html.charCodeAt(i))) i++;
    tag.start = p;
    tag.end = i;
    tag.nameStart = nameStart;
    tag.closing = closing;
    return true;
  }
  return false;
}

/** Only whitespace between `from` and `to`. */
export function blankBetween(html: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isSpace(html.charCodeAt(i))) return false;
  return true;
}

/** A `\s` run that is not one plain space: one starting with another space character, or two or more. */
const SPACE_RUN_RE = /[^\S ]\s*| \s+/g;

/**
 * `s.replace(/\s+/g, ' ')`, leaving alone the runs that are already one space (most of them):
 * the regex engine's scan and one native replace beat a character loop building the result.
 */
export function collapseSpaces(s: string): string {
  return s.replace(SPACE_RUN_RE, ' ');
}

/**
 * Where the attributes of an element tag end: the next `>` outside quotes (consumed), or before a
 * quote that is never closed (as `"[^"]*"` would stop there). Quote positions are cached and the
 * scan only moves forward, so the whole document costs one pass however its tags are written.
 */
export class TagScanner {
  /** The last `"` and `'` found (-1: there is none further on; -2: not searched yet). */
  private nextDouble = -2;
  private nextSingle = -2;
  constructor(private readonly html: string) {}

  private quote(q: number, from: number): number {
    const known = q === 34 ? this.nextDouble : this.nextSingle;
    if (known === -1 || known >= from) return known;
    const at = this.html.indexOf(q === 34 ? '"' : "'", from);
    if (q === 34) this.nextDouble = at;
    else this.nextSingle = at;
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
