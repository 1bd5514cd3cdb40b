/**
 * Signature split: the `-- ` delimiter, a sign-off followed by a short name block, a mobile
 * footer, or a trailing "-Name". Only the last lines of a reply are looked at.
 */
import { MAX_SCAN_LINE_CHARS } from './quote-patterns.js';

/** How many non-empty lines from the bottom a sign-off or delimiter may sit. */
const WINDOW_LINES = 14;
/** A name block below a sign-off: at most this many non-empty lines, each at most NAME_LINE_CHARS. */
const NAME_BLOCK_LINES = 8;
const NAME_LINE_CHARS = 80;
/** A sign-off line, name included, is at most this long. */
const MAX_SIGN_OFF_CHARS = 80;
/** Lines below a `-- ` delimiter. */
const DELIMITED_LINES = 30;
/** Lines from the end that are looked at (a window of non-empty lines plus blank ones and a delimited block). */
const TAIL_LINES = 80;

const DELIMITER_RE = /^(?:-- ?|--|—|_{2,}|-{3,})$/u;
const STRICT_DELIMITER_RE = /^-- ?$/;

/** Sign-offs, whole line, optional trailing punctuation; optionally followed by a short name. */
const SIGN_OFF_RE = new RegExp(
  '^(?:' +
    [
      // English
      'thanks(?: (?:a lot|again|so much|in advance|and regards|& regards))?',
      'thank you(?: (?:very much|so much|in advance))?',
      'many thanks',
      'thx',
      'ty',
      'cheers',
      'best',
      'bye',
      'ciao',
      'hth',
      'later',
      'all the best',
      'best wishes',
      '(?:best|kind|warm|warmest|many|with kind|with best) regards',
      'regards',
      'br',
      'kr',
      'sincerely(?: yours)?',
      'yours(?: (?:sincerely|truly|faithfully))?',
      'take care',
      'talk soon',
      'respectfully',
      // German
      'mit freundlichen gr(?:ü|ue|u)(?:ß|ss)en',
      'freundliche gr(?:ü|ue|u)(?:ß|ss)e',
      '(?:viele|beste|liebe|herzliche|sch(?:ö|oe)ne) gr(?:ü|ue|u)(?:ß|ss)e',
      'gr(?:ü|ue|u)(?:ß|ss)e',
      'gru(?:ß|ss)',
      'mfg',
      'lg',
      'vg',
      'danke(?: sch(?:ö|oe)n)?',
      'vielen dank',
      'besten dank',
      'herzlichen dank',
      // French
      'cordialement',
      'bien cordialement',
      'tr(?:è|e)s cordialement',
      'bien (?:à|a) vous',
      'bien (?:à|a) toi',
      "merci(?: beaucoup| d'avance| bien)?",
      '(?:sinc(?:è|e)res |meilleures |bien )?salutations',
      'bonne journ(?:é|e)e',
      '(?:à|a) bient(?:ô|o)t',
      'amicalement',
      'bises',
      // Spanish
      '(?:un )?saludos?(?: cordiales)?',
      'saludos cordiales',
      'atentamente',
      '(?:muchas )?gracias',
      'un abrazo',
      'abrazos',
      'cordialmente',
      // Dutch
      '(?:met )?vriendelijke groet(?:en)?',
      '(?:hartelijke )?groet(?:en|jes)?',
      'mvg',
      'bedankt',
      'alvast bedankt',
      'dank je(?: wel)?',
      'dank u(?: wel)?',
      // Portuguese
      'atenciosamente',
      'cumprimentos',
      '(?:melhores )?cumprimentos',
      'abra(?:ç|c)os?',
      'um abra(?:ç|c)o',
      'obrigad[oa]',
      'att',
      'atte',
      'sauda(?:ç|c)(?:õ|o)es',
      // Italian
      'cordiali saluti',
      'distinti saluti',
      'saluti',
      'grazie(?: mille)?',
      'tsch(?:ü|ue)ss',
      'adi(?:ó|o)s',
      'tot ziens',
      'at(?:é|e) logo',
    ].join('|') +
    String.raw`)(?![\p{L}])\s*[,.!:;]*\s*([-–]?\s?["'(]?\p{L}[\p{L}.'"()-]{0,20}(?:\s["'(]?\p{L}[\p{L}.'"()-]{0,20}){0,3})?\s*$`,
  'iu',
);

/** The name after a sign-off on the same line ("Thanks, Anna") must be capitalised words (checked case-sensitively). */
const NAME_RE = /^[-–]?\s?["'(]?\p{Lu}[\p{L}.'"()-]{0,20}(?:\s["'(]?\p{Lu}[\p{L}.'"()-]{0,20}){0,3}$/u;

function isSignOff(line: string): boolean {
  if (line.length > MAX_SIGN_OFF_CHARS) return false;
  const m = SIGN_OFF_RE.exec(line);
  return m !== null && (m[1] === undefined || NAME_RE.test(m[1]));
}

/** Mobile and webmail footers. */
const FOOTER_RE = new RegExp(
  '^(?:' +
    [
      String.raw`sent (?:from|with|via|using) (?:my |the )?[\p{L}\d][^\n]{0,60}`,
      String.raw`get outlook for (?:ios|android|mac|windows)[^\n]{0,20}`,
      String.raw`(?:von meinem|gesendet von meinem|von|gesendet mit|gesendet von) [^\n]{0,40}(?:gesendet)?`,
      String.raw`envoy(?:é|e) (?:de|depuis) (?:mon |ma )?[^\n]{1,40}`,
      String.raw`enviado (?:desde|do|de|a partir do) (?:mi |meu |o |a )?[^\n]{1,40}`,
      String.raw`(?:verzonden|verstuurd) (?:vanaf|vanuit|met|van) (?:mijn )?[^\n]{1,40}`,
      String.raw`inviato da (?:iphone|ipad|il mio|[^\n]{1,40})[^\n]{0,40}`,
      String.raw`(?:obtener|obtenir|hol dir|download) outlook (?:para|pour|für|voor) (?:ios|android)[^\n]{0,20}`,
    ].join('|') +
    ')$',
  'iu',
);

export interface SignatureSplit {
  body: string;
  signature?: string;
}

function capped(line: string): string {
  return (line.length > MAX_SCAN_LINE_CHARS ? line.slice(0, MAX_SCAN_LINE_CHARS) : line).trim();
}

/** A line that reads like a sentence rather than a name, title or phone number. */
function prose(line: string): boolean {
  return line.length > NAME_LINE_CHARS || line.endsWith('?') || (/[.!:]$/.test(line) && line.split(/\s+/).length >= 6);
}

/** Is everything below line `from` a short block (a name, a title, contact lines)? */
function shortBlockAfter(lines: readonly string[], from: number, maxLines: number, strict: boolean): boolean {
  let n = 0;
  for (let i = from + 1; i < lines.length; i++) {
    const l = lines[i]!.trim();
    if (l === '') continue;
    if (++n > maxLines) return false;
    if (!strict && prose(l) && !FOOTER_RE.test(capped(l))) return false;
  }
  return true;
}

/** "-Roman", "- Adam L. Beberg", "-- Russ": a dash, then one word or up to four capitalised words. */
const DASH_NAME_RE = /^(?:[-–]{1,2}\s?\p{L}{1,20}|[-–]{1,2}\s?["']?\p{Lu}[\p{L}.'"-]{0,20}(?:\s["']?\p{Lu}[\p{L}.'"-]{0,20}){1,3})$/u;
const MULTI_WORD_DASH_NAME_RE = /^[-–]{1,2}\s?["']?\p{Lu}[\p{L}.'"-]{0,20}(?:\s["']?\p{Lu}[\p{L}.'"-]{0,20}){1,3}$/u;
/** Lines a dash-name may have below it (an address, a URL). */
const DASH_NAME_BLOCK = 4;

function isDelimiter(raw: string, l: string): boolean {
  return l === '--' || STRICT_DELIMITER_RE.test(raw.trimStart()) || DELIMITER_RE.test(l);
}

/** Does line `i` (the k-th non-empty line from the bottom) open a signature block? */
function opensSignature(lines: readonly string[], i: number, k: number): boolean {
  const raw = lines[i]!;
  const l = capped(raw);
  if (l === '--' || STRICT_DELIMITER_RE.test(raw.trimStart())) return shortBlockAfter(lines, i, DELIMITED_LINES, true);
  if (DELIMITER_RE.test(l) || isSignOff(l)) return shortBlockAfter(lines, i, NAME_BLOCK_LINES, false);
  if (DASH_NAME_RE.test(l)) return !listAbove(lines, i) && shortBlockAfter(lines, i, DASH_NAME_BLOCK, false);
  return k <= 1 && FOOTER_RE.test(l);
}

/** Is the non-empty line above `i` a list item? Then a "- Word" line is one too, not a name. */
function listAbove(lines: readonly string[], i: number): boolean {
  for (let j = i - 1; j >= 0; j--) {
    const l = lines[j]!.trim();
    if (l !== '') return /^[-–*•]/.test(l);
  }
  return false;
}

/** A line that can sit between a sign-off and what follows it: a name, a title, a company. */
function nameLike(line: string): boolean {
  return line.length <= 40 && line.split(/\s+/).length <= 5 && !/[:.?!;,]$/.test(line);
}

/** Index of the line where the signature starts, or -1. */
function signatureStart(lines: readonly string[]): number {
  const window: number[] = [];
  for (let i = lines.length - 1; i >= 0 && window.length < WINDOW_LINES; i--) if (lines[i]!.trim() !== '') window.push(i);
  const k = window.findIndex((i, n) => opensSignature(lines, i, n));
  if (k < 0) return -1;
  let start = window[k]!;
  // A sign-off, delimiter or dash-name a few name-like lines above opens the block instead
  // ("Thanks,\nAnna\nSent from my iPhone"; "-- Russ" above a mailing-list footer).
  for (let j = k + 1; j < window.length && j <= k + 4; j++) {
    const i = window[j]!;
    const l = capped(lines[i]!);
    if (isSignOff(l) || isDelimiter(lines[i]!, l) || (MULTI_WORD_DASH_NAME_RE.test(l) && !listAbove(lines, i))) start = i;
    else if (!nameLike(l)) break;
  }
  return start;
}

/** Splits the signature off a reply whose quoted history is already gone. */
export function splitSignature(text: string): SignatureSplit {
  const offset = tailOffset(text);
  return splitTail(text, offset, text.slice(offset).split('\n'));
}

/**
 * splitSignature for a text given with its lines (`text` is `lines[from, to)` joined by `\n`, each
 * less its trailing whitespace when `trimEnds`, and does not start with a line break): the tail's
 * lines are taken from them instead of split again.
 */
export function splitSignatureOfLines(text: string, lines: readonly string[], from: number, to: number, trimEnds = false): SignatureSplit {
  const first = Math.max(from, to - TAIL_LINES);
  let tail = first === 0 && to === lines.length ? lines : lines.slice(first, to);
  if (trimEnds) tail = tail.map((l) => l.trimEnd());
  if (first === from) return splitTail(text, 0, tail);
  let offset = text.length + 1;
  for (const l of tail) offset -= l.length + 1;
  return splitTail(text, offset, tail);
}

/** The split, given the tail of `text` from `offset` on as its lines. */
function splitTail(text: string, offset: number, lines: readonly string[]): SignatureSplit {
  const start = signatureStart(lines);
  if (start < 0) return { body: text };
  const body = (text.slice(0, offset) + lines.slice(0, start).join('\n')).trimEnd();
  if (body.trim() === '') return { body: text };
  const signature = lines.slice(start).join('\n').trim();
  return signature === '' ? { body: text } : { body, signature };
}

/** Where the last TAIL_LINES lines begin: only they can hold a signature. */
function tailOffset(text: string): number {
  let pos = text.length;
  for (let n = 0; n < TAIL_LINES; n++) {
    const nl = text.lastIndexOf('\n', pos - 1);
    if (nl < 0) return 0;
    pos = nl;
  }
  return pos + 1;
}
