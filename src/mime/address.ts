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

/** Read until `close`, honouring backslash escapes (and nesting for comments). */
function readDelimited(s: string, start: number, open: string, close: string): { text: string; end: number } {
  let depth = 1;
  let text = '';
  let i = start;
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length && close !== '>') {
      text += s[++i];
      continue;
    }
    if (c === open && open !== close) depth++;
    else if (c === close && --depth === 0) return { text, end: i + 1 };
    text += c;
  }
  return { text, end: i };
}

function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  let text = '';
  const pushText = (): void => {
    if (text.trim() !== '') tokens.push({ kind: 'text', text: text.trim() });
    text = '';
  };
  for (let i = 0; i < s.length; ) {
    const c = s[i]!;
    if (c === '"' || c === '(' || c === '<') {
      pushText();
      const close = c === '"' ? '"' : c === '(' ? ')' : '>';
      const r = readDelimited(s, i + 1, c, close);
      tokens.push({ kind: c === '"' ? 'quoted' : c === '(' ? 'comment' : 'angle', text: r.text });
      i = r.end;
    } else if (c === ',' || c === ';' || c === ':') {
      pushText();
      tokens.push({ kind: 'sep', text: c });
      i++;
    } else {
      text += c;
      i++;
    }
  }
  pushText();
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
