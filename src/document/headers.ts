/**
 * The document's `headers`: the original fields less the MIME structure headers, as `raw`
 * (default) or, on request and only where it is lossless, as `parsed`.
 */
import { warning, type Warning } from '../errors.js';
import { MAX_RAW_HEADER_CHARS } from '../limits.js';
import { joinRaw } from '../mime/header-split.js';
import { decodeWords, parseAddressList, type Address } from '../mime/headers.js';
import { SYNTHESIZED_FIELD } from '../mime/synthesized.js';
import type { HeaderField } from '../mime/types.js';
import type { RawEmailHeaders } from '../model/index.js';

/**
 * Removed because the body sent is no longer the MIME body they describe (`Content-Length`,
 * written by mbox tools, gives the byte length of that body; `Content-MD5` its checksum).
 */
export const MIME_STRUCTURE_HEADERS = new Set([
  'content-type',
  'content-transfer-encoding',
  'mime-version',
  'content-length',
  'content-md5',
]);

/**
 * Headers that describe the top-level MIME entity itself (RFC 2045, 2183, 2557). Removed too
 * when that entity is not the text sent as the body (a multipart, or an attachment sent
 * alone: `Content-Disposition: attachment; filename=scan.pdf` would describe the body as a
 * file); kept for a single text part, which they still describe.
 */
export const ENTITY_HEADERS = new Set(['content-disposition', 'content-description', 'content-id', 'content-location']);

/** Fields kept first when the raw block must be cut: those the service reads to build the comment. */
export const PRIORITY_HEADERS = new Set([
  'from',
  'sender',
  'reply-to',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'in-reply-to',
  'references',
  'thread-index',
  'thread-topic',
]);

const PARSED_KEY_RE = /^[\x21-\x39\x3b-\x7e]+$/;

/** Fields holding address lists: in `parsed`, their encoded-word names are decoded and quoted where needed. */
const ADDRESS_HEADERS = new Set([
  'from',
  'sender',
  'reply-to',
  'to',
  'cc',
  'bcc',
  'resent-from',
  'resent-sender',
  'resent-to',
  'resent-cc',
  'resent-bcc',
  'disposition-notification-to',
]);

/** Characters that make a display name need quotes (RFC 5322 specials, `"` and `\\` escaped inside). */
const SPECIALS_RE = /[()<>[\]:;@\\,."]/;

function mailbox(a: Address): string {
  const name = a.name === undefined ? undefined : SPECIALS_RE.test(a.name) ? `"${a.name.replace(/["\\]/g, '\\$&')}"` : a.name;
  if (name !== undefined && a.address !== undefined) return `${name} <${a.address}>`;
  return a.address ?? name ?? '';
}

/**
 * A field's value for `parsed`: the unfolded value with RFC 2047 encoded-words decoded (the
 * API takes any UTF-8 there). In an address field the list is written again with decoded
 * names (`"Doe, John" <j@x>`), so a decoded comma or colon cannot change its meaning; groups
 * are flattened. A value without encoded-words is sent as it is.
 */
function parsedValue(f: HeaderField, warnings: Warning[]): string {
  if (!f.value.includes('=?')) return f.value;
  if (ADDRESS_HEADERS.has(f.key)) {
    const list = parseAddressList(f.value, warnings);
    if (list.length > 0) return list.map(mailbox).join(', ');
  }
  return decodeWords(f.value, warnings);
}

/**
 * Which fields fit in `limit` characters (joined with `\n`): first the priority fields in
 * order, each kept if it fits; then the other fields in order until the first that does not
 * fit, which is dropped with all fields after it. A field is never split.
 */
export function fitFields(fields: readonly HeaderField[], limit: number): { kept: HeaderField[]; dropped: number } {
  const total = fields.reduce((n, f, i) => n + f.raw.length + (i > 0 ? 1 : 0), 0);
  if (total <= limit) return { kept: [...fields], dropped: 0 };
  const keep = new Set<HeaderField>();
  let used = 0;
  const take = (f: HeaderField): boolean => {
    const cost = f.raw.length + (keep.size > 0 ? 1 : 0);
    if (used + cost > limit) return false;
    keep.add(f);
    used += cost;
    return true;
  };
  for (const f of fields) if (PRIORITY_HEADERS.has(f.key)) take(f);
  for (const f of fields) if (!PRIORITY_HEADERS.has(f.key) && !take(f)) break;
  const kept = fields.filter((f) => keep.has(f));
  return { kept, dropped: fields.length - kept.length };
}

function parsedHeaders(fields: readonly HeaderField[], warnings: Warning[]): Record<string, string> | undefined {
  const seen = new Set<string>();
  for (const f of fields) {
    if (seen.has(f.key) || !PARSED_KEY_RE.test(f.name)) return undefined;
    seen.add(f.key);
  }
  // Null prototype: a field named `__proto__` is a key like any other (on `{}` the assignment
  // would set the prototype and the field would vanish); JSON.stringify writes own keys.
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const f of fields) out[f.name] = parsedValue(f, warnings);
  return out;
}

const SYNTHESIZED_KEY = SYNTHESIZED_FIELD.toLowerCase();

/**
 * Build `headers`: the fields less MIME_STRUCTURE_HEADERS and the synthesized-headers marker
 * (which becomes MAILGATE_WARN_HEADERS_SYNTHESIZED, see src/mime/synthesized.ts), and less ENTITY_HEADERS unless the
 * top-level entity is the body sent (`rootIsBody`). `parsed` is used only when asked for AND no name repeats (case-insensitive)
 * AND every name is ASCII AND the raw form would not need cutting; otherwise `raw`. Parsed
 * values have their encoded-words decoded (see parsedValue). With `raw`, also the fields the
 * block was joined from, so that a comment built right after need not split it again.
 */
export function buildHeaders(
  fields: readonly HeaderField[],
  mode: 'raw' | 'parsed',
  warnings: Warning[],
  rootIsBody = true,
): { headers: RawEmailHeaders; fields?: readonly HeaderField[] } {
  let synthesized: HeaderField | undefined;
  const visible: HeaderField[] = [];
  let size = -1; // characters of the visible fields joined with `\n`
  for (const f of fields) {
    const key = f.key;
    if (key === SYNTHESIZED_KEY) synthesized ??= f;
    else if (!MIME_STRUCTURE_HEADERS.has(key) && (rootIsBody || !ENTITY_HEADERS.has(key))) {
      visible.push(f);
      size += f.raw.length + 1;
    }
  }
  if (synthesized !== undefined) warnings.push(warning('MAILGATE_WARN_HEADERS_SYNTHESIZED', synthesized.value.trim().slice(0, 200)));
  const { kept, dropped } = size <= MAX_RAW_HEADER_CHARS ? { kept: visible, dropped: 0 } : fitFields(visible, MAX_RAW_HEADER_CHARS);
  if (mode === 'parsed' && dropped === 0) {
    const parsed = parsedHeaders(visible, warnings);
    if (parsed !== undefined) return { headers: { parsed } };
  }
  if (dropped > 0) {
    warnings.push(
      warning('MAILGATE_WARN_HEADERS_TRUNCATED', `header block over ${MAX_RAW_HEADER_CHARS} characters; ${dropped} field(s) dropped`),
    );
  }
  const raw = joinRaw(kept);
  const headers = { raw };
  // Splitting `raw` again gives exactly `kept` back (every line comes from a header scan),
  // unless a line holds a CR, which a scan reads as a line end. Asked field by field: `raw` is
  // still a concatenation, and searching it would first copy it whole.
  for (const f of kept) if (f.raw.includes('\r')) return { headers };
  return { headers, fields: kept };
}
