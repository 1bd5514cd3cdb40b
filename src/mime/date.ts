/**
 * RFC 5322 dates, tolerant: optional weekday, obsolete zones (UT, GMT, EST … PDT, military),
 * common named zones, 2- and 3-digit years, missing seconds, asctime order, ISO 8601,
 * trailing comments and junk. Returns undefined when no usable date can be read.
 */

const MONTHS: Record<string, number> = {
  jan: 0,
  feb: 1,
  mar: 2,
  apr: 3,
  may: 4,
  jun: 5,
  jul: 6,
  aug: 7,
  sep: 8,
  oct: 9,
  nov: 10,
  dec: 11,
};

/** Offsets in minutes east of UTC. RFC 5322 obsolete zones, then names seen in real mail. */
const ZONES: Record<string, number> = {
  ut: 0,
  utc: 0,
  gmt: 0,
  z: 0,
  est: -300,
  edt: -240,
  cst: -360,
  cdt: -300,
  mst: -420,
  mdt: -360,
  pst: -480,
  pdt: -420,
  akst: -540,
  akdt: -480,
  hst: -600,
  ast: -240,
  adt: -180,
  nst: -210,
  ndt: -150,
  wet: 0,
  west: 60,
  bst: 60,
  ist: 60,
  cet: 60,
  met: 60,
  mez: 60,
  cest: 120,
  mest: 120,
  mesz: 120,
  eet: 120,
  eest: 180,
  msk: 180,
  msd: 240,
  jst: 540,
  kst: 540,
  hkt: 480,
  sgt: 480,
  awst: 480,
  acst: 570,
  aest: 600,
  aedt: 660,
  nzst: 720,
  nzdt: 780,
};

const RFC_RE =
  /(\d{1,2})[\s\-/]*([a-z]{3})[a-z]*\.?[\s\-/,]*(\d{2,4})[\s,T]+(\d{1,2})[:.](\d{1,2})(?:[:.](\d{1,2}))?(?:\.\d+)?\s*([+-]\s?\d{1,2}:?\d{2}|[a-z]{1,5}\b)?/i;
const ASCTIME_RE = /([a-z]{3})[a-z]*\s+(\d{1,2})\s+(\d{1,2}):(\d{1,2})(?::(\d{1,2}))?\s+(?:([a-z]{1,5}|[+-]\d{4})\s+)?(\d{4})/i;

const digit = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : -1);

/** `+hhmm` / `-hhmm`, the zone nearly all mail writes, in minutes; undefined for any other text. */
function numericZone(zone: string): number | undefined {
  if (zone.length !== 5) return undefined;
  const sign = zone.charCodeAt(0);
  const h1 = digit(zone.charCodeAt(1));
  const h2 = digit(zone.charCodeAt(2));
  const m1 = digit(zone.charCodeAt(3));
  const m2 = digit(zone.charCodeAt(4));
  if ((sign !== 43 && sign !== 45) || h1 < 0 || h2 < 0 || m1 < 0 || m2 < 0) return undefined;
  return (sign === 45 ? -1 : 1) * ((h1 * 10 + h2) * 60 + m1 * 10 + m2);
}

function zoneOffset(zone: string | undefined): number | undefined {
  if (zone === undefined) return 0;
  const quick = numericZone(zone);
  if (quick !== undefined && Math.abs(quick) <= 18 * 60 && zone.charCodeAt(3) <= 53) return quick;
  const z = zone.replace(/\s/g, '').toLowerCase();
  const m = /^([+-])(\d{1,2}):?(\d{2})$/.exec(z);
  if (m !== null) {
    const minutes = Number(m[2]) * 60 + Number(m[3]);
    if (Number(m[3]) > 59 || minutes > 18 * 60) return undefined;
    return m[1] === '-' ? -minutes : minutes;
  }
  if (z in ZONES) return ZONES[z];
  return 0; // military letters and unknown names: -0000 (RFC 5322 4.3)
}

function fullYear(y: string): number {
  const n = Number(y);
  if (y.length === 2) return n < 50 ? 2000 + n : 1900 + n;
  if (y.length === 3) return 1900 + n;
  return n;
}

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  offset: number | undefined;
}

function build(p: Parts): Date | undefined {
  if (p.offset === undefined || p.month < 0) return undefined;
  if (p.day < 1 || p.day > 31 || p.hour > 24 || p.minute > 59 || p.second > 60) return undefined;
  const t = Date.UTC(p.year, p.month, p.day, p.hour, p.minute, Math.min(p.second, 59)) - p.offset * 60_000;
  return Number.isFinite(t) ? new Date(t) : undefined;
}

function month(name: string): number {
  return MONTHS[name.slice(0, 3).toLowerCase()] ?? -1;
}

/** MONTHS by the lowercased three letters packed into one number (see monthAt). */
const MONTH_CODES = new Map(Object.entries(MONTHS).map(([name, n]) => [monthCode(name, 0), n]));

function monthCode(s: string, i: number): number {
  return ((s.charCodeAt(i) | 32) << 16) | ((s.charCodeAt(i + 1) | 32) << 8) | (s.charCodeAt(i + 2) | 32);
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** The value of the two digits at `i`, or -1. */
function twoDigits(s: string, i: number): number {
  const a = digit(s.charCodeAt(i));
  const b = digit(s.charCodeAt(i + 1));
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

/**
 * The date nearly all mail writes, `[Www, ]d[d] Mmm yyyy hh:mm:ss +hhmm` (single spaces, a zone
 * ending the value or followed by a space), read without the regex: what RFC_RE and build give for
 * it, or null for any other shape (then the regexes decide, as before).
 */
function commonDate(v: string): Date | undefined | null {
  let i = 0;
  if (isLetter(v.charCodeAt(0))) {
    if (!isLetter(v.charCodeAt(1)) || !isLetter(v.charCodeAt(2)) || v.charCodeAt(3) !== 44 || v.charCodeAt(4) !== 32) return null;
    i = 5;
  }
  let day = digit(v.charCodeAt(i));
  if (day < 0) return null;
  const d2 = digit(v.charCodeAt(i + 1));
  if (d2 >= 0) {
    day = day * 10 + d2;
    i++;
  }
  if (v.charCodeAt(i + 1) !== 32 || v.charCodeAt(i + 5) !== 32) return null;
  const month =
    isLetter(v.charCodeAt(i + 2)) && isLetter(v.charCodeAt(i + 3)) && isLetter(v.charCodeAt(i + 4))
      ? MONTH_CODES.get(monthCode(v, i + 2))
      : undefined;
  if (month === undefined) return null;
  i += 6; // the year
  const century = twoDigits(v, i);
  const decade = twoDigits(v, i + 2);
  if (century < 0 || decade < 0 || v.charCodeAt(i + 4) !== 32) return null;
  i += 5; // the time
  const hour = twoDigits(v, i);
  const minute = twoDigits(v, i + 3);
  const second = twoDigits(v, i + 6);
  if (hour < 0 || minute < 0 || second < 0 || v.charCodeAt(i + 2) !== 58 || v.charCodeAt(i + 5) !== 58 || v.charCodeAt(i + 8) !== 32)
    return null;
  i += 9; // the zone
  const sign = v.charCodeAt(i);
  const zh = twoDigits(v, i + 1);
  const zm = twoDigits(v, i + 3);
  if ((sign !== 43 && sign !== 45) || zh < 0 || zm < 0 || (i + 5 < v.length && v.charCodeAt(i + 5) !== 32)) return null;
  // zoneOffset's rule: minutes over 59 or an offset over 18 hours is no zone.
  const minutes = zh * 60 + zm;
  const offset = zm > 59 || minutes > 18 * 60 ? undefined : sign === 45 ? -minutes : minutes;
  return build({ year: century * 100 + decade, month, day, hour, minute, second, offset });
}

/** Parse a Date header value; undefined when absent or unusable. */
export function parseDate(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (v === '' || v.length > 512) return undefined;
  const common = commonDate(v);
  return common !== null ? common : datePatterns(v);
}

/** parseDate by its patterns alone, on a trimmed value (parseDate's shortcut for the common shape must always agree with it). */
export function datePatterns(v: string): Date | undefined {
  let m = RFC_RE.exec(v);
  if (m !== null) {
    return build({
      year: fullYear(m[3]!),
      month: month(m[2]!),
      day: Number(m[1]),
      hour: Number(m[4]),
      minute: Number(m[5]),
      second: m[6] === undefined ? 0 : Number(m[6]),
      offset: zoneOffset(m[7]),
    });
  }
  m = ASCTIME_RE.exec(v);
  if (m !== null) {
    return build({
      year: Number(m[7]),
      month: month(m[1]!),
      day: Number(m[2]),
      hour: Number(m[3]),
      minute: Number(m[4]),
      second: m[5] === undefined ? 0 : Number(m[5]),
      offset: zoneOffset(m[6]),
    });
  }
  if (/^\d{4}-\d{2}-\d{2}/.test(v)) {
    const t = Date.parse(v);
    if (Number.isFinite(t)) return new Date(t);
  }
  return undefined;
}
