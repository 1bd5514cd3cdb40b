/**
 * Address lists (From, To, Cc, Bcc, Reply-To), tolerant of what real mail carries:
 * groups (flattened), comments, quoted and RFC 2047 names, obsolete routes, missing
 * commas between bare addresses, and unbalanced junk.
 */
import type { Warning } from '../errors.js';
import { decodeWords } from './encoded-words.js';

export interface Address {
  name?: string;
  address?: string;
}

type Token =
  | { kind: 'text'; text: string }
  | { kind: 'quoted'; text: string }
  | { kind: 'comment'; text: string }
  | { kind: 'angle'; text: string }
  | { kind: 'sep'; text: ',' | ';' | ':' };

/** Read until `close`, honouring backslash escapes (and nesting for comments). Copies runs of text, not characters. */
function readDelimited(s: string, start: number, open: string, close: string): { text: string; end: number } {
  const openCode = open.charCodeAt(0);
  const closeCode = close.charCodeAt(0);
  const escapes = close !== '>';
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
    if (c === openCode && open !== close) depth++;
    else if (c === closeCode && --depth === 0) return { text: text + s.slice(run, i), end: i + 1 };
  }
  return { text: text + s.slice(run, i), end: i };
}

const BACKSLASH = 92;
const QUOTE = 34;
const PAREN = 40;
const ANGLE = 60;
const COMMA = 44;
const SEMICOLON = 59;
const COLON = 58;

function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  // Plain text runs from `run` to the next quote, comment, angle or separator.
  let run = 0;
  const pushText = (end: number): void => {
    const text = s.slice(run, end).trim();
    if (text !== '') tokens.push({ kind: 'text', text });
  };
  for (let i = 0; i < s.length; ) {
    const c = s.charCodeAt(i);
    if (c === QUOTE || c === PAREN || c === ANGLE) {
      pushText(i);
      const open = s[i]!;
      const close = c === QUOTE ? '"' : c === PAREN ? ')' : '>';
      const r = readDelimited(s, i + 1, open, close);
      tokens.push({ kind: c === QUOTE ? 'quoted' : c === PAREN ? 'comment' : 'angle', text: r.text });
      i = run = r.end;
    } else if (c === COMMA || c === SEMICOLON || c === COLON) {
      pushText(i);
      tokens.push({ kind: 'sep', text: c === COMMA ? ',' : c === SEMICOLON ? ';' : ':' });
      i = run = i + 1;
    } else i++;
  }
  pushText(s.length);
  return tokens;
}

function clean(name: string, warnings: Warning[] | undefined): string | undefined {
  const t = decodeWords(name.replace(/\s+/g, ' ').trim(), warnings).trim();
  return t === '' ? undefined : t;
}

function make(name: string | undefined, address: string | undefined, warnings?: Warning[]): Address {
  const a: Address = {};
  const n = name === undefined ? undefined : clean(name, warnings);
  const addr = address?.replace(/\s+/g, '').replace(/^mailto:/i, '');
  if (n !== undefined) a.name = n;
  if (addr !== undefined && addr !== '') a.address = addr;
  return a;
}

/** One comma-separated item: `Name <addr>`, `addr (Name)`, `addr`, or bare addresses missing commas. */
function readItem(tokens: Token[], warnings: Warning[] | undefined): Address[] {
  const angle = tokens.find((t) => t.kind === 'angle');
  if (angle !== undefined) {
    const route = angle.text.lastIndexOf(':');
    const address = route >= 0 && angle.text.startsWith('@') ? angle.text.slice(route + 1) : angle.text;
    const phrase = tokens.filter((t) => t !== angle && (t.kind === 'text' || t.kind === 'quoted')).map((t) => t.text);
    const comment = tokens.find((t) => t.kind === 'comment');
    const name = phrase.length > 0 ? phrase.join(' ') : comment?.text;
    return [make(name, address.trim(), warnings)];
  }
  const words = tokens
    .filter((t) => t.kind === 'text' || t.kind === 'quoted')
    .map((t) => t.text)
    .join(' ');
  const comment = tokens.find((t) => t.kind === 'comment')?.text;
  if (words !== '' && tokens.every((t) => t.kind === 'quoted' || t.kind === 'comment')) return [make(words, undefined, warnings)];
  const parts = words.split(/\s+/).filter((w) => w !== '');
  if (parts.length > 1 && parts.every((w) => w.includes('@'))) return parts.map((w) => make(undefined, w));
  if (parts.length > 1 && !words.includes('@')) return [make(words, undefined, warnings)];
  if (words === '' && comment === undefined) return [];
  return [make(comment, words === '' ? undefined : words, warnings)];
}

/**
 * Parse an address list; groups are flattened, junk yields partial entries rather than errors.
 * An unknown charset in an encoded-word name adds MAILGATE_WARN_CHARSET_FALLBACK to `warnings` (once).
 */
export function parseAddressList(value: string, warnings?: Warning[]): Address[] {
  const out: Address[] = [];
  let item: Token[] = [];
  const flush = (): void => {
    for (const a of readItem(item, warnings)) if (a.address !== undefined || a.name !== undefined) out.push(a);
    item = [];
  };
  for (const t of tokenize(value)) {
    if (t.kind !== 'sep') item.push(t);
    else if (t.text === ':')
      item = []; // group name (or junk before a colon): dropped
    else flush();
  }
  flush();
  return out;
}

/** `Name <a@b>` when both are known, else whichever is known. */
export function formatAddress(a: Address): string {
  if (a.name !== undefined && a.address !== undefined) return `${a.name} <${a.address}>`;
  return a.address ?? a.name ?? '';
}
