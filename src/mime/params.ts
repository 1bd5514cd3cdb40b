/**
 * Structured header values with parameters (Content-Type, Content-Disposition):
 * `type/subtype; name="value"; name*0*=utf-8''a%20b; name*1=c`.
 * Quoted strings, RFC 2231 continuations and charsets, and RFC 2047 words inside
 * quoted values (not allowed, widely sent) are all understood.
 */
import type { Warning } from '../errors.js';
import { addWarningOnce, decodeBytes } from './charset.js';
import { decodeWords } from './encoded-words.js';

export interface StructuredValue {
  /** The value before the first `;`, lowercased and trimmed (e.g. `text/plain`, `attachment`). */
  value: string;
  /** Parameters by lowercased name, decoded. */
  params: Record<string, string>;
}

/** Split at `;` outside quoted strings (a backslash escapes the next character there); returns the raw pieces, as slices. */
function splitParams(input: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    if (quoted) {
      if (c === 92 && i + 1 < input.length) i++;
      else if (c === 34) quoted = false;
    } else if (c === 34) quoted = true;
    else if (c === 59) {
      pieces.push(input.slice(start, i));
      start = i + 1;
    }
  }
  pieces.push(input.slice(start));
  return pieces;
}

function unquote(v: string): { text: string; quoted: boolean } {
  const t = v.trim();
  if (t.length >= 1 && t[0] === '"') {
    const end = t.endsWith('"') && t.length > 1 ? t.length - 1 : t.length;
    return { text: t.slice(1, end).replace(/\\(["\\])/g, '$1'), quoted: true };
  }
  return { text: t, quoted: false };
}

function percentBytes(text: string, into: number[]): void {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const hex = c === 37 ? text.slice(i + 1, i + 3) : '';
    if (hex.length === 2 && /^[0-9a-fA-F]{2}$/.test(hex)) {
      into.push(parseInt(hex, 16));
      i += 2;
    } else into.push(c & 0xff);
  }
}

interface Continuation {
  parts: Array<{ text: string; extended: boolean } | undefined>;
}

/**
 * Parse `value; a=b; c="d"` into a lowercased value and decoded parameters. An unknown charset
 * in an RFC 2231 or RFC 2047 parameter adds MAILGATE_WARN_CHARSET_FALLBACK to `warnings` (once).
 */
export function parseStructured(input: string, warnings?: Warning[]): StructuredValue {
  const pieces = splitParams(input);
  const value = pieces[0]!.trim().toLowerCase();
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  const continued = new Map<string, Continuation>();
  for (let i = 1; i < pieces.length; i++) {
    const piece = pieces[i]!;
    const eq = piece.indexOf('=');
    if (eq < 0) continue;
    const key = piece.slice(0, eq).trim().toLowerCase();
    if (key === '') continue;
    const { text, quoted } = unquote(piece.slice(eq + 1));
    const m = /^([^*]+)\*(\d{1,3})?(\*)?$/.exec(key);
    if (m === null) {
      if (!(key in params)) params[key] = quoted || text.includes('=?') ? decodeWords(text, warnings) : text;
      continue;
    }
    const name = m[1]!;
    const index = m[2] === undefined ? 0 : Number(m[2]);
    const extended = m[3] === '*' || (m[2] === undefined && key.endsWith('*'));
    let c = continued.get(name);
    if (c === undefined) continued.set(name, (c = { parts: [] }));
    if (index < 1000) c.parts[index] = { text, extended };
  }
  for (const [name, c] of continued) params[name] = joinContinuations(c, warnings);
  return { value, params };
}

/**
 * RFC 2231: the first segment may carry `charset'language'`; extended segments are
 * percent-encoded bytes, joined before decoding so split multi-byte characters survive.
 */
function joinContinuations(c: Continuation, warnings: Warning[] | undefined): string {
  let charset: string | undefined;
  let out = '';
  let bytes: number[] = [];
  const flush = (): void => {
    if (bytes.length === 0) return;
    const decoded = decodeBytes(Uint8Array.from(bytes), charset);
    out += decoded.text;
    addWarningOnce(warnings, decoded.warning);
    bytes = [];
  };
  c.parts.forEach((p, i) => {
    if (p === undefined) return;
    let text = p.text;
    if (i === 0 && p.extended) {
      const m = /^([^']*)'[^']*'(.*)$/s.exec(text);
      if (m !== null) {
        charset = m[1] === '' ? undefined : m[1];
        text = m[2]!;
      }
    }
    if (p.extended) percentBytes(text, bytes);
    else {
      flush();
      out += text;
    }
  });
  flush();
  return out.includes('=?') ? decodeWords(out, warnings) : out;
}
