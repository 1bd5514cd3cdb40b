/**
 * The words mail clients write above quoted history, per language (English, German, French,
 * Spanish, Dutch, Portuguese, plus Italian, Polish and the Scandinavian languages where cheap).
 * Every pattern is anchored and bounded, and is only ever run on a capped slice of a line.
 */
import { isSpace } from '../mime/spaces.js';

/** Longest slice of one line any pattern looks at. */
export const MAX_SCAN_LINE_CHARS = 400;

/** Lead words of "On <date>, <someone> wrote:" lines (matched case-sensitively: "AM" is no "Am"). */
const LEAD = String.raw`(?:On|At|Am|Le|El|Op|Em|Il(?: giorno)?|W dniu|Den|På|Dne|Pada)`;

/** The verbs of those lines. */
export const VERB = String.raw`(?:wrote|writes|a écrit|a ecrit|écrit|escribió|escribio|escribe|schrieb|schreibt|schreef|schrijft|het volgende geschreven|geschreven|escreveu|escreve|ha scritto|scrive|napisał|napisal|pisze|skrev|skriver|kirjoitti|napsal)`;

/** English weekday and month names: "On Mon, Bob wrote:" has no digit but is dated all the same. */
const WEEKDAY_OR_MONTH = String.raw`(?:[Mm]on|[Tt]ue|[Ww]ed|[Tt]hu|[Ff]ri|[Ss]at|[Ss]un|[Jj]an|[Ff]eb|[Mm]ar|[Aa]pr|[Mm]ay|[Jj]un|[Jj]ul|[Aa]ug|[Ss]ep|[Oo]ct|[Nn]ov|[Dd]ec)[a-z]*`;

/**
 * "On … wrote:" on one line (or on 2-3 lines joined by a space). Accepts leading and trailing
 * dashes and a colon with or without a space before it. The verb may come last
 * ("… John <j@x> wrote:") or before the sender ("Am … schrieb John <j@x>:").
 */
export const ON_WROTE_RE = new RegExp(
  String.raw`^[-\s*]{0,12}${LEAD}\s(?=[^\n]{0,300}(?:\d|\b${WEEKDAY_OR_MONTH}\b))[^\n]{1,300}?\s${VERB}(?:\s?:?|\s[^\n]{1,160}?\s?:)\s*-*$`,
  'u',
);

/** The end of "<someone with an address> wrote:" and "John <j@x> schrieb am <date>:" (no lead word). */
const ADDRESS_WROTE_TAIL_RE = new RegExp(String.raw`\s${VERB}(?:\s?:|\s(?:am|on|le|el|op|em|il)\s[^\n]{1,120}:)\s*$`, 'u');

/** "<someone with an address> wrote:": an address before a final "wrote:" within the first 400 characters. */
export function isAddressWrote(text: string): boolean {
  if (text.length > MAX_SCAN_LINE_CHARS) return false;
  const m = ADDRESS_WROTE_TAIL_RE.exec(text);
  return m !== null && text.lastIndexOf('@', m.index) >= 0;
}

const DATE_START_RE = /^\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}\b/;

/** "2011/4/7 Nathan <support@example.com>" and "2014-10-17 11:28 GMT+03:00 Bob <bob@example.com>:" (Gmail). */
export function isDatePerson(text: string): boolean {
  return text.length <= MAX_SCAN_LINE_CHARS && DATE_START_RE.test(text) && /(?:>|:)\s*$/.test(text) && text.includes('@');
}

/** Cheap filter before ON_WROTE_RE on a single line: does the line start like one of them? */
export const LEAD_START_RE = new RegExp(String.raw`^[-\s*]{0,12}${LEAD}\s`, 'u');
/** The first two characters of each lead word, as `code0 * 65536 + code1` ("On", "Il", "W ", "På"…). */
const LEAD_PAIRS = new Set(
  LEAD.slice(3, -1)
    .split('|')
    .map((word) => word.charCodeAt(0) * 65536 + word.charCodeAt(1)),
);

/**
 * Can LEAD_START_RE match the trimmed `text`? Its match starts with a dash or a star, or (as
 * `text` has no leading space) with a lead word at index 0: the first two characters must be one's.
 */
export function mayLead(text: string): boolean {
  const c = text.charCodeAt(0);
  if (c === 45 || c === 42) return true; // '-', '*'
  return LEAD_PAIRS.has(c * 65536 + text.charCodeAt(1));
}

/** Where an "On … wrote:" begins inside a line of reply text ("reply On Wed, … wrote:"). */
export const INLINE_LEAD_RE = new RegExp(String.raw`(?:\s|-)${LEAD}\s`, 'gu');

/**
 * The end of a splitter's last line is `/(?:VERB\s*-*|:\s*-*)$/iu`. No verb ends in a space or a
 * dash, so its `\s*-*` is the text's whole trailing run of dashes and the whole run of spaces before
 * it: endsLikeSplitter strips those, then looks for `:` or VERB_END_RE only there, instead of
 * trying every verb from every position of the text.
 */
const VERB_END_RE = new RegExp(String.raw`${VERB}$`, 'iu');
/** The longest verb, in UTF-16 code units (each verb character is one code unit, folded or not). */
const LONGEST_VERB = Math.max(
  ...VERB.slice(3, -1)
    .split('|')
    .map((verb) => verb.length),
);

/**
 * A table of ASCII characters, from `chars` (in both cases when `anyCase`). Patterns are only run
 * on text whose first (or last) character is in their table or is not ASCII, so the table only
 * has to name the ASCII characters a match can start (or end) with.
 */
function asciiTable(chars: readonly string[], anyCase: boolean): Uint8Array {
  const table = new Uint8Array(128);
  for (const ch of chars) {
    for (const v of anyCase ? [ch.toLowerCase(), ch.toUpperCase()] : [ch]) {
      const c = v.charCodeAt(0);
      if (v.length === 1 && c < 128) table[c] = 1;
    }
  }
  return table;
}

/** Whether the character at `index` of `text` is in `table` or is not ASCII (false past the end). */
export function mayMatchAt(table: Uint8Array, text: string, index: number): boolean {
  const c = text.charCodeAt(index);
  return c >= 128 || table[c] === 1;
}

/** Last characters of those matches: a verb's last letter, `:`, `-` or a space (`\s`). */
const SPLITTER_LAST = asciiTable(
  [
    ...VERB.slice(3, -1)
      .split('|')
      .map((verb) => verb.slice(-1)),
    ':',
    '-',
    ' ',
    '\t',
    '\n',
    '\v',
    '\f',
    '\r',
  ],
  true,
);

/** Does the (trimmed) text end like a splitter's last line ("wrote:", "schrieb …:", "wrote-----")? Looks at the last 60 characters. */
export function endsLikeSplitter(text: string): boolean {
  if (!mayMatchAt(SPLITTER_LAST, text, text.length - 1)) return false;
  const window = text.length > 60 ? text.slice(-60) : text;
  let end = window.length;
  while (end > 0 && window.charCodeAt(end - 1) === 45) end--; // '-'
  while (end > 0 && isSpace(window.charCodeAt(end - 1))) end--;
  if (end === 0) return false;
  if (window.charCodeAt(end - 1) === 58) return true; // ':'
  return VERB_END_RE.test(window.slice(Math.max(0, end - LONGEST_VERB), end));
}

/** "-----Original Message-----" and its translations. */
export const ORIGINAL_MESSAGE_RE = new RegExp(
  String.raw`^\s*[-_=*]{2,}\s*(?:Original Message|Original|Reply Message|Ursprüngliche Nachricht|Urspr\. Nachricht|Originalnachricht|Antwort Nachricht|Message d'origine|Message original|Mensaje original|Mensagem original|Mensagem Original|Oorspronkelijk bericht|Origineel bericht|Oprindelig meddelelse|Originalmeddelelse|Ursprungligt meddelande|Opprinnelig melding|Messaggio originale|Wiadomość oryginalna|Alkuperäinen viesti)\s*[-_=*]{2,}\s*$`,
  'iu',
);

/** First characters of ORIGINAL_MESSAGE_RE's matches on a trimmed line. */
export const ORIGINAL_MESSAGE_FIRST = asciiTable(['-', '_', '=', '*'], false);

/** Forwarded-message markers (Gmail, Thunderbird, Apple Mail, Outlook) in the supported languages. */
const FORWARD_MARKERS = [
  String.raw`[-=_]{2,}\s*(?:Forwarded message|Forwarded Message|Weitergeleitete Nachricht|Message transféré|Message transfere|Mensaje reenviado|Mensaje Reenviado|Doorgestuurd bericht|Mensagem encaminhada|Mensagem reencaminhada|Messaggio inoltrato|Videresendt meddelelse|Vidarebefordrat meddelande|Wiadomość przekazana dalej)\s*[-=_]{2,}`,
  String.raw`[-=_]{2,}\s*[Bb]egin forwarded (?:text|message)\s*[-=_]*`,
  String.raw`Begin forwarded message\s?:`,
  String.raw`Forwarded message\s?:`,
  String.raw`Anfang der weitergeleiteten (?:Nachricht|E-Mail)\s?:`,
  String.raw`Début du message (?:réexpédié|transféré)\s?:`,
  String.raw`Inicio del mensaje reenviado\s?:`,
  String.raw`Begin doorgestuurd bericht\s?:`,
  String.raw`Início da mensagem (?:reencaminhada|encaminhada)\s?:`,
  String.raw`Inizio messaggio inoltrato\s?:`,
];

export const FORWARD_RE = new RegExp(`^\\s*(?:${FORWARD_MARKERS.join('|')})\\s*$`, 'iu');

/** First characters of FORWARD_RE's matches on a trimmed line, either case: each marker's first character, or its leading class. */
export const FORWARD_FIRST = asciiTable(
  FORWARD_MARKERS.flatMap((m) => (m.startsWith('[') ? [...m.slice(1, m.indexOf(']'))] : [m[0]!])),
  true,
);

/**
 * Last characters of FORWARD_RE's matches on a trimmed line, either case: `[-=_]` closing a
 * marker, `:`, or the last letter of "begin forwarded text"/"… message" written without a rule.
 */
export const FORWARD_LAST = asciiTable(['-', '=', '_', ':', 't', 'e'], true);

/**
 * A rule that mail clients write above their header block: Outlook's line of underscores in
 * plain text, or an HTML `<hr>` as converted to text (`---`).
 */
export const RULE_LINE_RE = /^\s*(?:_{8,}|-{3,}|—+)\s*$/u;
/** First characters of RULE_LINE_RE's matches on a trimmed line (`—` is not ASCII). */
export const RULE_LINE_FIRST = asciiTable(['_', '-'], false);

/** Header names that can open a quoted header block: sender and date/sent fields. */
const FROM_NAMES = ['from', 'von', 'de', 'van', 'da', 'fra', 'från', 'od', 'lähettäjä', 'från'];
const DATE_NAMES = [
  'date',
  'sent',
  'datum',
  'gesendet',
  'envoyé',
  'envoye',
  'enviado',
  'enviada em',
  'enviado em',
  'enviado el',
  'fecha',
  'verzonden',
  'verstuurd',
  'data',
  'inviato',
  'sendt',
  'skickat',
  'wysłano',
  'wysłane',
  'lähetetty',
];
/** Other fields of such a block. */
const OTHER_NAMES = [
  'to',
  'cc',
  'bcc',
  'subject',
  'reply-to',
  'an',
  'kopie',
  'betreff',
  'à',
  'a',
  'objet',
  'para',
  'asunto',
  'aan',
  'onderwerp',
  'assunto',
  'oggetto',
  'til',
  'till',
  'emne',
  'ämne',
  'do',
  'temat',
  'dw',
  'cci',
  'cco',
  'importance',
  'priorität',
  'wichtigkeit',
];

export type HeaderKind = 'from' | 'date' | 'other';

const HEADER_KIND = new Map<string, HeaderKind>([
  ...OTHER_NAMES.map((n): [string, HeaderKind] => [n, 'other']),
  ...DATE_NAMES.map((n): [string, HeaderKind] => [n, 'date']),
  ...FROM_NAMES.map((n): [string, HeaderKind] => [n, 'from']),
]);

/** `Name:` or `*Name:*` or `Name :` (French spacing) at the start of a line, with the value after it. */
const HEADER_LINE_RE = /^[ \t]{0,2}\*{0,2}([\p{L}][\p{L} -]{0,18}?)\*{0,2}[ \u00a0]?:\*{0,2}(?:[ \u00a0\t]+(.*))?$/u;

/**
 * After HEADER_LINE_RE's colon (the line's first) come at most two `*`, then the end of the line or
 * a space, no-break space or tab: "http://…" and "10:30" are no header lines, without running it.
 */
function valueMayFollow(line: string, colon: number): boolean {
  let j = colon + 1;
  if (line.charCodeAt(j) === 42) j++;
  if (line.charCodeAt(j) === 42) j++;
  if (j === line.length) return true;
  const c = line.charCodeAt(j);
  return c === 32 || c === 160 || c === 9;
}

/** Classifies a quoted-header line such as `From: John <j@x>`; undefined when it is not one. */
export function headerLine(line: string): { kind: HeaderKind; value: string } | undefined {
  const colon = line.indexOf(':');
  if (colon < 1 || colon > 28 || !valueMayFollow(line, colon)) return undefined;
  const m = HEADER_LINE_RE.exec(line.length > MAX_SCAN_LINE_CHARS ? line.slice(0, MAX_SCAN_LINE_CHARS) : line);
  if (!m) return undefined;
  const kind = HEADER_KIND.get(m[1]!.toLowerCase());
  return kind === undefined ? undefined : { kind, value: (m[2] ?? '').trim() };
}
