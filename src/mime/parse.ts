/**
 * Raw RFC 5322 bytes -> ParsedMessage.
 *
 * Works on the input Buffer by byte offsets: boundaries are found with indexOf, only the
 * text parts that form the body are decoded, attachments are measured without decoding.
 * Never throws anything but GatewayError.
 */
import { GatewayError, isGatewayError, warning, type Warning } from '../errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, parseLimit } from '../limits.js';
import { selectBody } from './body.js';
import { decodeBytes } from './charset.js';
import { splitHeader, type HeaderSplit } from './header-split.js';
import { htmlToText } from './html.js';
import { cleanName, generatedName } from './names.js';
import { expand, makePart, type MimePart, type ParseContext } from './structure.js';
import { decodeContent, decodedSize } from './transfer.js';
import type { AttachmentMeta, ParsedMessage } from './types.js';

export interface ParseOptions {
  /** Size budget in bytes (default DEFAULT_MAX_MESSAGE_BYTES); larger input is refused before parsing. */
  maxMessageBytes?: number;
}

const LF = 10;
const CR = 13;

function asBuffer(raw: Uint8Array): Buffer {
  return Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
}

function checkBudget(raw: Uint8Array, options: ParseOptions | undefined): void {
  const max = parseLimit('maxMessageBytes', options?.maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES, { min: 0 });
  if (raw.byteLength > max) {
    throw new GatewayError('MAILGATE_ERR_MIME_TOO_LARGE', `message of ${raw.byteLength} bytes exceeds the budget of ${max} bytes`, {
      details: { size: raw.byteLength, max },
    });
  }
}

/**
 * Old Mac mail breaks lines with a bare CR and holds no LF at all: each CR is read as a line
 * break (on a copy; the caller's bytes are never written). Any other input is returned as is.
 */
function crLinesToLf(buf: Buffer): Buffer {
  if (buf.indexOf(LF) >= 0) return buf;
  let i = buf.indexOf(CR);
  if (i < 0) return buf;
  const out = Buffer.from(buf);
  for (; i >= 0; i = out.indexOf(CR, i + 1)) out[i] = LF;
  return out;
}

/**
 * A blank or whitespace-only line at the start, within the bytes before `start` and the first
 * 4096 (/^[ \t\r]*\n/ on them; the raw bytes keep such lines, the parser skips them).
 */
function leadingBlank(buf: Buffer, start: number): boolean {
  const end = Math.min(start, 4096);
  let i = 0;
  while (i < end && (buf[i] === 32 || buf[i] === 9 || buf[i] === CR)) i++;
  return i < end && buf[i] === LF;
}

/** Offset of the first header line: skips leading blank lines and an mbox `From ` envelope line. */
function messageStart(buf: Buffer): number {
  let i = 0;
  while (i < buf.length && (buf[i] === LF || buf[i] === CR || buf[i] === 32 || buf[i] === 9)) i++;
  if (i === buf.length) throw new GatewayError('MAILGATE_ERR_MIME_EMPTY', 'the input holds no message (empty or only whitespace)');
  // Leading whitespace before a header belongs to no field; start at the line it is on.
  while (i > 0 && buf[i - 1] !== LF) i--;
  // `From `, compared byte by byte (no string made for it).
  if (buf[i] === 70 && buf[i + 1] === 114 && buf[i + 2] === 111 && buf[i + 3] === 109 && buf[i + 4] === 32) {
    const nl = buf.indexOf(LF, i);
    return nl < 0 ? buf.length : nl + 1;
  }
  return i;
}

function decodeText(buf: Buffer, part: MimePart, warnings: Warning[]): string {
  const bytes = decodeContent(buf, part.start, part.end, part.encoding);
  const { text, warning: w } = decodeBytes(bytes, part.params.charset);
  if (w !== undefined && !warnings.some((x) => x.code === w.code)) warnings.push(w);
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/**
 * Join the parts of a JMAP body list. `text` joins textBody: text/plain as decoded, text/html
 * parts (html-only alternatives inside a mixed body) converted with htmlToText; it is
 * undefined when textBody holds no text/plain part. `html` joins htmlBody likewise, text/plain
 * parts escaped into a pre-wrap block; undefined when htmlBody holds no text/html part.
 */
function joinParts(
  buf: Buffer,
  parts: MimePart[],
  want: 'text/plain' | 'text/html',
  cache: Map<MimePart, string>,
  warnings: Warning[],
): string | undefined {
  if (!parts.some((p) => p.type === want)) return undefined;
  let out = '';
  for (const p of parts) {
    if (p.type !== 'text/plain' && p.type !== 'text/html') continue;
    let text = cache.get(p);
    if (text === undefined) cache.set(p, (text = decodeText(buf, p, warnings)));
    if (p.type !== want) text = want === 'text/plain' ? htmlToText(text) : `<div style="white-space:pre-wrap">${escapeHtml(text)}</div>`;
    out = out === '' || out.endsWith('\n') ? out + text : `${out}\n${text}`;
  }
  return out;
}

function attachmentMeta(buf: Buffer, part: MimePart, inline: boolean, index: number): AttachmentMeta {
  const given = part.name === undefined ? '' : cleanName(part.name);
  return {
    name: given === '' ? generatedName(part.type, index) : given,
    size: part.omittedSize ?? decodedSize(buf, part.start, part.end, part.encoding),
    content_type: part.type,
    inline,
  };
}

/** Warnings about the message's own header block. */
function headerWarnings(head: HeaderSplit, warnings: Warning[]): void {
  if (head.missingSeparator) {
    warnings.push(
      warning(
        'MAILGATE_WARN_MIME_MALFORMED',
        'no blank line after the header block; the body starts at the first line that is not a header field',
      ),
    );
  }
  if (head.folded > 0) {
    warnings.push(
      warning(
        'MAILGATE_WARN_MIME_MALFORMED',
        `${head.folded} line(s) in the header block are not header fields; kept as continuation lines of the field above`,
      ),
    );
  }
  if (head.nonAsciiNames > 0) {
    warnings.push(
      warning(
        'MAILGATE_WARN_MIME_MALFORMED',
        `${head.nonAsciiNames} header field name(s) hold non-ASCII characters; such headers are sent raw only`,
      ),
    );
  }
}

function parseUnchecked(input: Buffer): ParsedMessage {
  const buf = crLinesToLf(input);
  const start = messageStart(buf);
  const head = splitHeader(buf, start, buf.length);
  if (head.fields.length === 0) {
    throw new GatewayError('MAILGATE_ERR_MIME_NOT_EMAIL', 'no header field could be read at the start of the input');
  }
  const warnings: Warning[] = [];
  if (leadingBlank(buf, start)) {
    warnings.push(warning('MAILGATE_WARN_MIME_MALFORMED', 'blank lines before the header block were skipped'));
  }
  headerWarnings(head, warnings);
  const ctx: ParseContext = { buf, parts: 1, warnings, limitWarned: false };
  const root = makePart(head.fields, head.bodyStart, buf.length, 'text/plain', warnings);
  expand(ctx, root, 0);
  const body = selectBody(root);
  const parsed: ParsedMessage = {
    headerBlock: head.block,
    headers: head.fields,
    attachments: body.attachments.map((a, i) => attachmentMeta(buf, a.part, a.inline, i + 1)),
    rootIsBody:
      root.children === undefined &&
      (body.textBody.includes(root) || body.htmlBody.includes(root)) &&
      (root.type === 'text/plain' || root.type === 'text/html'),
    size: buf.length,
    warnings,
  };
  const cache = new Map<MimePart, string>();
  const text = joinParts(buf, body.textBody, 'text/plain', cache, warnings);
  const html = joinParts(buf, body.htmlBody, 'text/html', cache, warnings);
  if (text !== undefined) parsed.text = text;
  if (html !== undefined) parsed.html = html;
  return parsed;
}

/**
 * Parse raw RFC 5322 bytes (CRLF or LF). Throws GatewayError only:
 * MAILGATE_ERR_MIME_TOO_LARGE (over the budget, checked first), MAILGATE_ERR_MIME_EMPTY,
 * MAILGATE_ERR_MIME_NOT_EMAIL (no header field at the start), MAILGATE_ERR_MIME_INTERNAL.
 */
export function parseMessage(raw: Uint8Array, options?: ParseOptions): ParsedMessage {
  checkBudget(raw, options);
  try {
    return parseUnchecked(asBuffer(raw));
  } catch (err) {
    if (isGatewayError(err)) throw err;
    throw new GatewayError(
      'MAILGATE_ERR_MIME_INTERNAL',
      `the parser failed on this message: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}
