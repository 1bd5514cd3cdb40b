/**
 * Rebuilds a MIME message from a provider's parsed fields (SendGrid parsed mode, Postmark without
 * RawEmail). The original bytes are gone there; the rebuild keeps the original header fields
 * (minus the MIME structure ones, which described the old body), and writes the text, HTML and
 * attachments as base64 parts, each labelled with its charset, so no transcoding loses anything.
 * Boundaries derive from the content: a provider's retry of the same mail rebuilds the same
 * bytes, and the SHA-256 deduplication sees it as the same message.
 */
import { createHash } from 'node:crypto';

export interface TextPart {
  body: Buffer;
  /** Charset of `body` as the provider stated it. */
  charset: string;
}

export interface AttachmentPart {
  data: Buffer;
  contentType: string;
  filename?: string;
  contentId?: string;
}

export interface RebuildInput {
  /** Header fields, each `Name: value` (continuation lines allowed), without CRLF at the end, as byte strings (one char per byte). */
  headers: string[];
  text?: TextPart;
  html?: TextPart;
  attachments: AttachmentPart[];
}

const CRLF = '\r\n';
const STRUCTURE = /^(content-type|content-transfer-encoding|mime-version)$/i;

/** Splits a raw header block into fields (a line starting with space or tab continues the previous one). */
export function headerFields(block: string): string[] {
  const fields: string[] = [];
  for (const line of block.replace(/\r?\n$/, '').split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && fields.length > 0) fields[fields.length - 1] += CRLF + line;
    else if (line.trim() !== '') fields.push(line);
  }
  return fields;
}

export const fieldName = (field: string): string => field.slice(0, Math.max(0, field.indexOf(':'))).trim();

/** A charset label safe to write into a header (a token); anything else becomes utf-8's neutral fallback. */
export function charsetToken(label: string | undefined, fallback: string): string {
  return label !== undefined && /^[A-Za-z0-9._:+-]{1,64}$/.test(label) ? label : fallback;
}

/** An RFC 2047 encoded-word for a header value that is not plain ASCII. */
export function encodeHeaderValue(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) return value;
  return `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

function base64Lines(data: Buffer): string {
  const b64 = data.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 76) lines.push(b64.slice(i, i + 76));
  return lines.join(CRLF);
}

/** A `name="…"` parameter, RFC 2231-encoded when the value is not plain ASCII. */
function param(name: string, value: string): string {
  if (/^[\x20-\x7e]*$/.test(value) && !/["\\]/.test(value)) return `${name}="${value}"`;
  return `${name}*=UTF-8''${encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

interface Part {
  headers: string[];
  body: string;
}

const leaf = (headers: string[], data: Buffer): Part => ({
  headers: [...headers, 'Content-Transfer-Encoding: base64'],
  body: base64Lines(data),
});

function textLeaf(type: 'plain' | 'html', p: TextPart): Part {
  return leaf([`Content-Type: text/${type}; charset="${charsetToken(p.charset, 'utf-8')}"`], p.body);
}

function attachmentLeaf(a: AttachmentPart): Part {
  const type = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+$/.test(a.contentType) ? a.contentType : 'application/octet-stream';
  const name = a.filename === undefined ? '' : `; ${param('filename', a.filename)}`;
  const headers = [`Content-Type: ${type}${a.filename === undefined ? '' : `; ${param('name', a.filename)}`}`];
  headers.push(`Content-Disposition: ${a.contentId ? 'inline' : 'attachment'}${name}`);
  if (a.contentId) headers.push(`Content-ID: <${a.contentId.replace(/^<|>$/g, '').replace(/[\r\n<>]/g, '')}>`);
  return leaf(headers, a.data);
}

function serialize(p: Part): string {
  return p.headers.join(CRLF) + CRLF + CRLF + p.body;
}

function multipart(subtype: string, parts: Part[]): Part {
  const bodies = parts.map(serialize);
  const boundary = `=_mailgate_${createHash('sha256').update(bodies.join('\0')).digest('hex').slice(0, 32)}`;
  const body = bodies.map((b) => `--${boundary}${CRLF}${b}${CRLF}`).join('') + `--${boundary}--`;
  return { headers: [`Content-Type: multipart/${subtype}; boundary="${boundary}"`], body };
}

/** The rebuilt message: original headers (minus MIME structure), MIME-Version, then the body tree. */
export function rebuildMime(input: RebuildInput): Buffer {
  const bodies: Part[] = [];
  if (input.text) bodies.push(textLeaf('plain', input.text));
  if (input.html) bodies.push(textLeaf('html', input.html));
  if (bodies.length === 0) bodies.push(textLeaf('plain', { body: Buffer.alloc(0), charset: 'utf-8' }));
  const body = bodies.length === 1 ? bodies[0]! : multipart('alternative', bodies);
  const root = input.attachments.length === 0 ? body : multipart('mixed', [body, ...input.attachments.map(attachmentLeaf)]);
  const kept = input.headers.filter((f) => !STRUCTURE.test(fieldName(f)));
  return Buffer.from(serialize({ headers: [...kept, 'MIME-Version: 1.0', ...root.headers], body: root.body }) + CRLF, 'latin1');
}

/** The unfolded value of the first header field `name` of a raw message, as UTF-8 text. */
export function rawHeader(raw: Buffer, name: string): string | undefined {
  const end = raw.indexOf('\r\n\r\n') === -1 ? raw.indexOf('\n\n') : raw.indexOf('\r\n\r\n');
  const block = raw.subarray(0, end === -1 ? raw.length : end).toString('utf8');
  const field = headerFields(block).find((f) => fieldName(f).toLowerCase() === name.toLowerCase());
  return field
    ?.slice(field.indexOf(':') + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim();
}

/** The addresses of an address-list header value (a plain reading: `<a@b>` or bare `a@b` per comma-separated item). */
export function addresses(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((item) => /<([^<>]+)>/.exec(item)?.[1] ?? /[^\s"<>]+@[^\s"<>]+/.exec(item)?.[0])
    .filter((a): a is string => a !== undefined);
}
