/**
 * Outlook .msg (CFB/OLE2) → an RFC 5322 message. The header block comes from the transport
 * headers when the file has them (less the MIME structure fields, which describe a body that
 * is rebuilt here), else from the properties (sender, recipients, subject, date, Message-ID).
 * The body (plain and/or HTML) and the attachments (with their content, so sizes are right)
 * become a fresh MIME structure.
 */
import { createHash } from 'node:crypto';
import msgreader, { type FieldsData } from '@kenjiuno/msgreader';
import iconv from 'iconv-lite';
import { GatewayError } from '../errors.js';
import { checkCompoundFile } from './cfb.js';
import { compressedRtfBody } from './rtf.js';
import { synthesizedLine } from './synthesized.js';

/**
 * The package is CommonJS with `exports.default`: under Node's ESM loader the class sits on
 * `.default`; bundlers and test runners that unwrap CommonJS defaults hand over the class itself.
 */
const MsgReader = (typeof msgreader === 'function' ? msgreader : msgreader.default) as typeof msgreader.default;
type MsgReader = InstanceType<typeof MsgReader>;

const STRUCTURE_FIELD_RE = /^(content-type|content-transfer-encoding|mime-version|content-length)$/i;

/** RFC 2047 B-encoding for a header value that is not plain ASCII. */
export function encodeWord(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) return value;
  const words: string[] = [];
  let chunk = '';
  for (const ch of value) {
    if (Buffer.byteLength(chunk + ch) > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString('base64')}?=`).join('\r\n ');
}

export function mailbox(name: string | undefined, address: string | undefined): string | undefined {
  const addr = address?.trim();
  const display = name?.trim();
  if (!addr && !display) return undefined;
  if (!addr) return encodeWord(display!);
  if (!display || display === addr) return addr.includes('@') ? addr : `<${addr}>`;
  const quoted = /^[\x20-\x7e]*$/.test(display) ? `"${display.replace(/["\\]/g, '\\$&')}"` : encodeWord(display);
  return `${quoted} <${addr}>`;
}

function smtpOf(f: FieldsData): string | undefined {
  const typed = f.addressType?.toUpperCase() === 'SMTP' ? f.email : undefined;
  return f.smtpAddress ?? typed ?? (f.email?.includes('@') ? f.email : undefined);
}

/** Transport headers less MIME structure fields, unfolded lines kept as they are. */
export function transportHeaders(headers: string): string[] {
  const lines = headers
    .replace(/\r?\n$/, '')
    .replace(/(\r?\n){2,}[\s\S]*$/, '')
    .split(/\r?\n/);
  const out: string[] = [];
  let skipping = false;
  for (const line of lines) {
    if (/^[ \t]/.test(line)) {
      if (!skipping && out.length > 0) out.push(line);
      continue;
    }
    const name = line.slice(0, line.indexOf(':')).trim();
    skipping = STRUCTURE_FIELD_RE.test(name);
    if (!skipping && line.includes(':')) out.push(line);
  }
  return out;
}

function propertyHeaders(f: FieldsData): string[] {
  const out: string[] = [];
  const from = mailbox(
    f.senderName,
    f.senderSmtpAddress ?? (f.senderAddressType?.toUpperCase() === 'SMTP' ? f.senderEmail : undefined) ?? f.sentRepresentingSmtpAddress,
  );
  if (from) out.push(`From: ${from}`);
  for (const kind of ['to', 'cc', 'bcc'] as const) {
    const list = (f.recipients ?? [])
      .filter((r) => (r.recipType ?? 'to') === kind)
      .map((r) => mailbox(r.name, smtpOf(r)))
      .filter((v): v is string => !!v);
    if (list.length > 0) out.push(`${kind === 'to' ? 'To' : kind === 'cc' ? 'Cc' : 'Bcc'}: ${list.join(',\r\n ')}`);
  }
  if (f.subject !== undefined) out.push(`Subject: ${encodeWord(f.subject)}`);
  const date = f.clientSubmitTime ?? f.messageDeliveryTime ?? f.creationTime;
  if (date && Number.isFinite(Date.parse(date))) out.push(`Date: ${new Date(date).toUTCString().replace(/GMT$/, '+0000')}`);
  if (f.messageId) out.push(`Message-ID: ${f.messageId.trim()}`);
  out.push(
    synthesizedLine(`${out.map((l) => l.slice(0, l.indexOf(':'))).join(', ')} from the .msg file's properties (no transport headers kept)`),
  );
  return out;
}

export function base64Lines(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64').replace(/.{76}/g, '$&\r\n');
}

function htmlOf(f: FieldsData): string | undefined {
  if (f.bodyHtml) return f.bodyHtml;
  if (!f.html || f.html.length === 0) return undefined;
  const cp = f.internetCodepage;
  const label = cp === undefined || cp === 65001 ? 'utf-8' : `cp${cp}`;
  return iconv.decode(Buffer.from(f.html), iconv.encodingExists(label) ? label : 'utf-8');
}

export function textPart(type: 'plain' | 'html', text: string): string {
  return `Content-Type: text/${type}; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64Lines(Buffer.from(text, 'utf8'))}\r\n`;
}

function attachmentPart(reader: MsgReader, att: FieldsData, n: number): string {
  const data = reader.getAttachment(att);
  const embedded = att.innerMsgContent === true;
  const name = (embedded ? data.fileName : (att.fileName ?? att.fileNameShort ?? att.name)) || `attachment-${n}.bin`;
  const type = embedded ? 'application/vnd.ms-outlook' : att.attachMimeTag?.trim() || 'application/octet-stream';
  const encName = encodeWord(name).replace(/"/g, '');
  const disposition = att.pidContentId ? 'inline' : 'attachment';
  const cid = att.pidContentId ? `Content-ID: <${att.pidContentId.replace(/^<|>$/g, '')}>\r\n` : '';
  return `Content-Type: ${type}; name="${encName}"\r\nContent-Disposition: ${disposition}; filename="${encName}"\r\n${cid}Content-Transfer-Encoding: base64\r\n\r\n${base64Lines(data.content)}\r\n`;
}

export function multipart(subtype: string, boundary: string, parts: string[]): string {
  return `Content-Type: multipart/${subtype}; boundary="${boundary}"\r\n\r\n${parts.map((p) => `--${boundary}\r\n${p}`).join('')}--${boundary}--\r\n`;
}

/**
 * The body parts: the plain and HTML bodies where the file has them; where it has no HTML, the
 * RTF body (decompressed, its encapsulated HTML or text taken out, else reduced to text) fills
 * what is missing, so that a body kept only as RTF is not lost.
 */
export function bodyTexts(plain: string | undefined, html: string | undefined, rtf: () => Uint8Array | undefined): string[] {
  let text = plain !== undefined && plain !== '' ? plain : undefined;
  let markup = html;
  const compressed = markup === undefined ? rtf() : undefined;
  const fromRtf = compressed === undefined || compressed.length === 0 ? undefined : compressedRtfBody(compressed);
  if (fromRtf?.type === 'html') markup = fromRtf.text;
  else if (fromRtf !== undefined && text === undefined && fromRtf.text.trim() !== '') text = fromRtf.text;
  const texts: string[] = [];
  if (text !== undefined) texts.push(textPart('plain', text));
  if (markup !== undefined) texts.push(textPart('html', markup));
  return texts;
}

function bodyEntity(f: FieldsData, reader: MsgReader, seed: string): string {
  const texts = bodyTexts(f.body, htmlOf(f), () => f.compressedRtf);
  if (texts.length === 0) texts.push(textPart('plain', ''));
  const text = texts.length === 1 ? texts[0]! : multipart('alternative', `alt-${seed}`, texts);
  const atts = (f.attachments ?? []).map((a, i) => attachmentPart(reader, a, i + 1));
  return atts.length === 0 ? text : multipart('mixed', `mix-${seed}`, [text, ...atts]);
}

/** Reads a .msg file's bytes into RFC 5322 bytes; throws MAILGATE_ERR_INPUT_MSG_INVALID. */
export function msgToRfc822(file: Buffer, name = 'input'): Buffer {
  let fields: FieldsData;
  let reader: MsgReader;
  try {
    // The reader walks chains unbounded: a corrupt file is refused before it gets there.
    checkCompoundFile(file);
    reader = new MsgReader(new DataView(file.buffer, file.byteOffset, file.byteLength));
    fields = reader.getFileData();
  } catch (err) {
    throw new GatewayError('MAILGATE_ERR_INPUT_MSG_INVALID', `${name} is not a readable Outlook .msg file: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (fields.error || fields.dataType !== 'msg') {
    throw new GatewayError(
      'MAILGATE_ERR_INPUT_MSG_INVALID',
      `${name} is not a readable Outlook .msg file: ${fields.error ?? 'no message'}`,
    );
  }
  try {
    const seed = createHash('sha256').update(file).digest('hex').slice(0, 24);
    const headers = fields.headers?.trim() ? transportHeaders(fields.headers) : propertyHeaders(fields);
    const entity = bodyEntity(fields, reader, seed);
    return Buffer.from(`${[...headers, 'MIME-Version: 1.0'].join('\r\n')}\r\n${entity}`, 'utf8');
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError('MAILGATE_ERR_INPUT_MSG_INVALID', `${name}: cannot rebuild the message: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
