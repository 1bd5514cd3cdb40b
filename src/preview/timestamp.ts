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

function clamp(d: Date, what: string, warnings: Warning[]): string {
  const t = d.getTime();
  if (t >= MIN_TIMESTAMP_MS && t <= MAX_TIMESTAMP_MS) return d.toISOString();
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
