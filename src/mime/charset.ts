/**
 * Bytes -> text for every charset label mail carries.
 *
 * Resolution order for a label:
 *   1. cleaned (lowercased, quotes, trailing junk and `*language` suffixes removed);
 *   2. utf-8, us-ascii, utf-16 (BOM sniffed) and utf-7 handled here;
 *   3. any label the WHATWG Encoding Standard knows (TextDecoder, full ICU: iso-8859-*,
 *      windows-125*, koi8-*, iso-2022-jp, shift_jis, euc-jp, euc-kr, gbk, gb18030, big5 …);
 *   4. any label iconv-lite knows (cp850, ibm437, utf-7 aliases …);
 *   5. otherwise the fallback rule: valid UTF-8 -> utf-8, else windows-1252, with
 *      MAILGATE_WARN_CHARSET_FALLBACK.
 */
import { isUtf8, isAscii } from 'node:buffer';
import { createRequire } from 'node:module';
import { warning, type Warning } from '../errors.js';

export interface DecodedText {
  text: string;
  warning?: Warning;
}

type Decoder = (bytes: Uint8Array) => string;

const utf8Decoder = new TextDecoder('utf-8');
const decoderCache = new Map<string, Decoder | null>();

/** Labels that mean "7-bit or whatever the sender's machine had": decoded by the fallback rule, silently. */
const ASCII_LABELS = new Set([
  'us-ascii',
  'ascii',
  'ansi_x3.4-1968',
  'iso646-us',
  'us',
  'iso-ir-6',
  '646',
  'cp367',
  'ibm367',
  'csascii',
  '7bit',
  '8bit',
]);
const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8', 'x-unicode20utf8', 'unicode-2-0-utf-8']);
const UTF7_LABELS = new Set(['utf-7', 'utf7', 'unicode-1-1-utf-7', 'csunicode11utf7', 'x-unicode-2-0-utf-7', 'unicode-2-0-utf-7']);
const UTF16_LABELS = new Set(['utf-16', 'utf16', 'unicode', 'ucs-2', 'iso-10646-ucs-2', 'csunicode']);
/** Labels that TextDecoder accepts but that would not decode mail sensibly. */
const REFUSED_LABELS = new Set(['x-user-defined', 'unknown', 'unknown-8bit', 'x-unknown', 'default', 'charset', 'none']);

/** Lowercase, unquote and strip junk from a charset label (`"UTF-8";` -> `utf-8`, `utf-8*en` -> `utf-8`). */
export function normalizeCharset(label: string): string {
  let s = label.trim().toLowerCase();
  const star = s.indexOf('*');
  if (star > 0) s = s.slice(0, star);
  s = s.replace(/^["']+|["';,\s]+$/g, '').replace(/["']/g, '');
  return s;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The fallback rule: valid UTF-8 is UTF-8, anything else is windows-1252. */
function fallbackDecode(bytes: Uint8Array): string {
  const buf = asBuffer(bytes);
  if (isAscii(buf)) return buf.toString('latin1');
  if (isUtf8(buf)) return utf8Decoder.decode(buf);
  return windows1252(buf);
}

/** Windows-1252 meanings of bytes 0x80-0x9f (WHATWG index); the rest of the table is latin1. */
const CP1252_C1 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
const C1_RE = /[\x80-\x9f]/g;
const C1_TEST_RE = /[\x80-\x9f]/;

/**
 * windows-1252 (also what `iso-8859-1`, `latin1` and `us-ascii` mean in mail, as in browsers).
 * Done here because Node's TextDecoder treats windows-1252 as plain latin1.
 */
function windows1252(bytes: Uint8Array): string {
  const buf = asBuffer(bytes);
  const s = buf.toString('latin1');
  if (isAscii(buf)) return s;
  return C1_TEST_RE.test(s) ? s.replace(C1_RE, (c) => CP1252_C1[c.charCodeAt(0) - 0x80]!) : s;
}

function decodeUtf16(bytes: Uint8Array, label: string): string {
  let le = label.endsWith('le');
  let start = 0;
  if (bytes.length >= 2) {
    if (bytes[0] === 0xff && bytes[1] === 0xfe) {
      le = true;
      start = 2;
    } else if (bytes[0] === 0xfe && bytes[1] === 0xff) {
      le = false;
      start = 2;
    } else if (!label.endsWith('le') && !label.endsWith('be')) le = looksLittleEndian(bytes);
  }
  const body = bytes.subarray(start);
  return new TextDecoder(le ? 'utf-16le' : 'utf-16be').decode(body);
}

/** Without a BOM, guess the byte order from where the zero bytes of ASCII text fall (samples the first 256 bytes). */
function looksLittleEndian(bytes: Uint8Array): boolean {
  let even = 0;
  let odd = 0;
  const n = Math.min(bytes.length, 256);
  for (let i = 0; i < n; i++) {
    if (bytes[i] !== 0) continue;
    if (i % 2 === 0) even++;
    else odd++;
  }
  return odd >= even;
}

function whatwgDecoder(label: string): Decoder | null {
  try {
    const d = new TextDecoder(label);
    if (d.encoding === 'windows-1252') return windows1252;
    return (bytes) => d.decode(bytes);
  } catch {
    return null;
  }
}

type Iconv = typeof import('iconv-lite');

let loadedIconv: Iconv | undefined;

/** iconv-lite, loaded for the first label the WHATWG table does not know: most mail never needs it. */
function iconvLite(): Iconv {
  return (loadedIconv ??= createRequire(import.meta.url)('iconv-lite') as Iconv);
}

function iconvDecoder(label: string): Decoder | null {
  const iconv = iconvLite();
  if (!iconv.encodingExists(label)) return null;
  return (bytes) => iconv.decode(asBuffer(bytes), label);
}

function resolve(label: string): Decoder | null {
  const cached = decoderCache.get(label);
  if (cached !== undefined) return cached;
  let d: Decoder | null = null;
  if (UTF7_LABELS.has(label)) d = iconvDecoder('utf-7');
  else if (label === 'utf-7-imap') d = iconvDecoder('utf7imap');
  else if (UTF16_LABELS.has(label) || label === 'utf-16le' || label === 'utf-16be') d = (b) => decodeUtf16(b, label);
  else if (!REFUSED_LABELS.has(label)) d = whatwgDecoder(label) ?? iconvDecoder(label) ?? aliasDecoder(label);
  if (decoderCache.size < 256) decoderCache.set(label, d);
  return d;
}

/** Labels seen in the wild that neither table knows (`cp-1252`, `win-1251`, `x-mac-…`, `iso8859-1`). */
function aliasDecoder(label: string): Decoder | null {
  let m = /^(?:x-)?(?:cp|win|windows)[-_ ]?(125\d|874|932|936|949|950)$/.exec(label);
  if (m) return whatwgDecoder(`windows-${m[1]}`) ?? iconvDecoder(`cp${m[1]}`);
  m = /^iso[-_ ]?8859[-_ ]?(\d{1,2})(?:[-:].*)?$/.exec(label);
  if (m) return whatwgDecoder(`iso-8859-${m[1]}`) ?? iconvDecoder(`iso-8859-${m[1]}`);
  m = /^x-mac-?(.+)$/.exec(label);
  if (m) return iconvDecoder(`mac${m[1]}`);
  return null;
}

/**
 * Decode bytes in the given charset. Never throws: an unknown label is decoded by the
 * fallback rule (valid UTF-8 -> utf-8, else windows-1252) and reported in `warning`.
 */
export function decodeBytes(bytes: Uint8Array, charset: string | undefined): DecodedText {
  if (bytes.length === 0) return { text: '' };
  const label = charset === undefined ? '' : normalizeCharset(charset);
  if (label === '' || ASCII_LABELS.has(label)) return { text: fallbackDecode(bytes) };
  if (UTF8_LABELS.has(label)) return { text: utf8Decoder.decode(bytes) };
  const decoder = resolve(label);
  if (decoder !== null) {
    try {
      return { text: decoder(bytes) };
    } catch {
      // fall through to the fallback rule
    }
  }
  return {
    text: fallbackDecode(bytes),
    warning: warning(
      'MAILGATE_WARN_CHARSET_FALLBACK',
      `unknown charset "${label.slice(0, 64)}"; decoded as utf-8 when valid, else windows-1252`,
    ),
  };
}

/** Adds `w` to `warnings` unless a warning with its code is already there (one per message and code). */
export function addWarningOnce(warnings: Warning[] | undefined, w: Warning | undefined): void {
  if (warnings !== undefined && w !== undefined && !warnings.some((x) => x.code === w.code)) warnings.push(w);
}

/** Decode 8-bit header bytes: UTF-8 when valid, else windows-1252. */
export function decodeHeaderBytes(bytes: Uint8Array): string {
  return fallbackDecode(bytes);
}
