/**
 * Address lists (From, To, Cc, Bcc, Reply-To), tolerant of what real mail carries:
 * groups (flattened), comments, quoted and RFC 2047 names, obsolete routes, missing
 * commas between bare addresses, and unbalanced junk.
 */
import type { Warning } from '../errors.js';
import { decodeWords } from './encoded-words.js';
import { hasSpace, needsSpaceCollapse } from './spaces.js';

export interface Address {
  name?: string;
  address?: string;
}

/** Token kinds of one list item, kept in two parallel arrays (kinds, texts) rather than an object each. */
const TEXT = 0;
const QUOTED = 1;
const COMMENT = 2;
const ANGLE = 3;

/** Where readDelimited stopped (one past the closing character, or the end of the input). */
let delimitedEnd = 0;

/** Read until `close`, honouring backslash escapes (and nesting for comments). Copies runs of text, not characters. */
function readDelimited(s: string, start: number, openCode: number, closeCode: number): string {
  const escapes = closeCode !== ANGLE_CLOSE;
  const nests = openCode !== closeCode;
  let depth = 1;
  let text = '';
  let run = start;
  let i = start;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === BACKSLASH && escapes && i + 1 < s.length) {
      text += s.slice(run, i) + s[i + 1]!;
      run = ++i + 1;
      continue;
    }
    if (c === openCode && nests) depth++;
    else if (c === closeCode && --depth === 0) {
      delimitedEnd = i + 1;
      return text + s.slice(run, i);
    }
  }
  delimitedEnd = i;
  return text + s.slice(run, i);
}

const BACKSLASH = 92;
const QUOTE = 34;
const PAREN = 40;
const PAREN_CLOSE = 41;
const ANGLE_OPEN = 60;
const ANGLE_CLOSE = 62;
const COMMA = 44;
const SEMICOLON = 59;
const COLON = 58;

function clean(name: string, warnings: Warning[] | undefined): string | undefined {
  const t = decodeWords((needsSpaceCollapse(name) ? name.replace(/\s+/g, ' ') : name).trim(), warnings).trim();
  return t === '' ? undefined : t;
}

const MAILTO_RE = /^mailto:/i;

function make(name: string | undefined, address: string | undefined, warnings?: Warning[]): Address {
  const a: Address = {};
  const n = name === undefined ? undefined : clean(name, warnings);
  let addr = address;
  if (addr !== undefined) {
    if (hasSpace(addr)) addr = addr.replace(/\s+/g, '');
    if ((addr.charCodeAt(0) | 32) === 109) addr = addr.replace(MAILTO_RE, '');
  }
  if (n !== undefined) a.name = n;
  if (addr !== undefined && addr !== '') a.address = addr;
  return a;
}

/** Adds `a` to `out` when it holds an address or a name. */
function keep(out: Address[], a: Address): void {
  if (a.address !== undefined || a.name !== undefined) out.push(a);
}

/**
 * One comma-separated item (tokens [0, count) of kinds/texts): `Name <addr>`, `addr (Name)`,
 * `addr`, or bare addresses missing commas. Its addresses are added to `out`.
 */
function readItem(kinds: number[], texts: string[], count: number, warnings: Warning[] | undefined, out: Address[]): void {
  let angle = -1;
  let comment: string | undefined;
  let words = ''; // text and quoted tokens joined with a space
  let wordCount = 0;
  let onlyQuotedOrComment = true;
  for (let i = 0; i < count; i++) {
    const k = kinds[i]!;
    if (k === ANGLE) {
      if (angle < 0) angle = i;
    } else if (k === COMMENT) comment ??= texts[i]!;
    else {
      words = wordCount++ === 0 ? texts[i]! : `${words} ${texts[i]!}`;
    }
    if (k !== QUOTED && k !== COMMENT) onlyQuotedOrComment = false;
  }
  if (angle >= 0) {
    const text = texts[angle]!;
    const route = text.lastIndexOf(':');
    const address = route >= 0 && text.startsWith('@') ? text.slice(route + 1) : text;
    keep(out, make(wordCount > 0 ? words : comment, address.trim(), warnings));
    return;
  }
  if (words !== '' && onlyQuotedOrComment) {
    keep(out, make(words, undefined, warnings));
    return;
  }
  if (hasSpace(words)) {
    const parts = words.split(/\s+/).filter((w) => w !== '');
    if (parts.length > 1 && parts.every((w) => w.includes('@'))) {
      for (const w of parts) keep(out, make(undefined, w));
      return;
    }
    if (parts.length > 1 && !words.includes('@')) {
      keep(out, make(words, undefined, warnings));
      return;
    }
  }
  if (words === '' && comment === undefined) return;
  keep(out, make(comment, words === '' ? undefined : words, warnings));
}

/**
 * Parse an address list; groups are flattened, junk yields partial entries rather than errors.
 * An unknown charset in an encoded-word name adds MAILGATE_WARN_CHARSET_FALLBACK to `warnings` (once).
 *
 * One pass: plain text runs from `run` to the next quote, comment, angle or separator; the
 * tokens of the current item are kept in two arrays reused across items.
 */
export function parseAddressList(value: string, warnings?: Warning[]): Address[] {
  const out: Address[] = [];
  const kinds: number[] = [];
  const texts: string[] = [];
  let count = 0;
  let run = 0;
  const s = value;
  for (let i = 0; i <= s.length; ) {
    const c = i < s.length ? s.charCodeAt(i) : COMMA; // the end closes the last item
    const delimited = c === QUOTE || c === PAREN || c === ANGLE_OPEN;
    if (!delimited && c !== COMMA && c !== SEMICOLON && c !== COLON) {
      i++;
      continue;
    }
    if (i > run) {
      const text = s.slice(run, i).trim();
      if (text !== '') {
        kinds[count] = TEXT;
        texts[count++] = text;
      }
    }
    if (delimited) {
      const text = readDelimited(s, i + 1, c, c === QUOTE ? QUOTE : c === PAREN ? PAREN_CLOSE : ANGLE_CLOSE);
      kinds[count] = c === QUOTE ? QUOTED : c === PAREN ? COMMENT : ANGLE;
      texts[count++] = text;
      i = run = delimitedEnd;
      continue;
    }
    if (c !== COLON) readItem(kinds, texts, count, warnings, out);
    count = 0; // a group name (or junk before a colon) is dropped
    i = run = i + 1;
  }
  return out;
}

/** `Name <a@b>` when both are known, else whichever is known. */
export function formatAddress(a: Address): string {
  if (a.name !== undefined && a.address !== undefined) return `${a.name} <${a.address}>`;
  return a.address ?? a.name ?? '';
}
