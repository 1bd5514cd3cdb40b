/**
 * The comment timestamp: the Date header; else the newest Received date; else the
 * `receivedAt` option; else now. Clamped into the spec's range (1950-01-01T00:00:00Z ..
 * 2049-12-31T23:59:59Z) with MAILGATE_WARN_DATE_OUT_OF_RANGE.
 */
import { warning, type Warning } from '../errors.js';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from '../limits.js';
import { getHeader, getHeaders, parseDate } from '../mime/headers.js';
import type { HeaderField } from '../mime/types.js';

export interface Dated {
  /** ISO-8601 UTC, within the allowed range. */
  timestamp: string;
  /** The Date header, clamped; undefined when the message has no usable Date. */
  sentAt?: string;
  /** The Date header as parsed, before clamping (the message's facts read it). */
  date?: Date;
}

/** The newest date among the Received fields (the part after the last `;`). */
export function newestReceived(headers: readonly HeaderField[]): Date | undefined {
  let best: Date | undefined;
  for (const v of getHeaders(headers, 'received')) {
    const semi = v.lastIndexOf(';');
    const d = semi < 0 ? undefined : parseDate(v.slice(semi + 1));
    if (d !== undefined && (best === undefined || d.getTime() > best.getTime())) best = d;
  }
  return best;
}

/** Two-digit strings 00..99. */
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const DAY_MS = 86_400_000;

/**
 * `new Date(t).toISOString()` for a time in 1950-2049 (a four-digit year), without the Date
 * object's calendar work: the civil date from the day number (H. Hinnant's days_from_civil
 * inverse), then the time of day. Several times faster than toISOString, which matters once per message.
 */
export function isoInRange(t: number): string {
  const days = Math.floor(t / DAY_MS);
  let ms = t - days * DAY_MS;
  const z = days + 719_468; // days since 0000-03-01
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(ms / 3_600_000);
  ms -= hour * 3_600_000;
  const minute = Math.floor(ms / 60_000);
  ms -= minute * 60_000;
  const second = Math.floor(ms / 1000);
  ms -= second * 1000;
  const milli = ms < 10 ? `00${ms}` : ms < 100 ? `0${ms}` : `${ms}`;
  return `${year}-${TWO_DIGITS[month]!}-${TWO_DIGITS[day]!}T${TWO_DIGITS[hour]!}:${TWO_DIGITS[minute]!}:${TWO_DIGITS[second]!}.${milli}Z`;
}

function clamp(d: Date, what: string, warnings: Warning[]): string {
  const t = d.getTime();
  if (t >= MIN_TIMESTAMP_MS && t <= MAX_TIMESTAMP_MS) return isoInRange(t);
  const to = t < MIN_TIMESTAMP_MS ? MIN_TIMESTAMP_MS : MAX_TIMESTAMP_MS;
  const shown = Number.isFinite(t) ? d.toISOString() : 'an invalid date';
  warnings.push(
    warning('MAILGATE_WARN_DATE_OUT_OF_RANGE', `${what} ${shown} lies outside 1950-2049; clamped to ${new Date(to).toISOString()}`),
  );
  return new Date(to).toISOString();
}

export function resolveDates(headers: readonly HeaderField[], receivedAt: Date | undefined, warnings: Warning[]): Dated {
  const date = parseDate(getHeader(headers, 'date'));
  if (date !== undefined) {
    const sentAt = clamp(date, 'the Date', warnings);
    return { timestamp: sentAt, sentAt, date };
  }
  const received = newestReceived(headers);
  const fallback = received ?? receivedAt ?? new Date();
  const from =
    received !== undefined ? 'the newest Received date' : receivedAt !== undefined ? 'the time it was received' : 'the current time';
  warnings.push(warning('MAILGATE_WARN_DATE_MISSING', `no usable Date header; the timestamp is ${from}`));
  return { timestamp: clamp(fallback, from, warnings) };
}
