/**
 * A message of the Graph stand-in, kept the way Exchange keeps one: as properties (subject,
 * sender, recipients, body, attachments), from which both the MIME rendering (`$value`) and the
 * JSON resource (`$select`, `$expand=attachments`) are produced. Exchange regenerates `$value`
 * too, so the two views agree on what matters without being byte-for-byte the original.
 */
import { createHash } from 'node:crypto';

export interface AttachmentSpec {
  name: string;
  contentType: string;
  /** Decoded size in bytes. */
  size: number;
}

export interface MessageSpec {
  subject: string;
  from: { name?: string; address: string };
  to: Array<{ name?: string; address: string }>;
  cc?: Array<{ name?: string; address: string }>;
  /** RFC 5322 Message-ID with its angle brackets. */
  internetMessageId: string;
  /** When the message was sent (its Date header) and received. */
  date: Date;
  /** Plain-text body. */
  text: string;
  attachments?: AttachmentSpec[];
}

export interface StoredMessage {
  /** The immutable id (`Prefer: IdType="ImmutableId"`): it survives moves between folders. */
  id: string;
  spec: MessageSpec;
  isRead: boolean;
  categories: string[];
  /** Changes with every update (Graph's changeKey / the etag). */
  changeKey: number;
}

const fmt = (a: { name?: string; address: string }): string => (a.name ? `"${a.name}" <${a.address}>` : `<${a.address}>`);

/** The header lines Exchange keeps as `internetMessageHeaders` (transport headers, in order). */
export function headerLines(spec: MessageSpec, boundary?: string): Array<{ name: string; value: string }> {
  const h = [
    { name: 'From', value: fmt(spec.from) },
    { name: 'To', value: spec.to.map(fmt).join(', ') },
    ...(spec.cc?.length ? [{ name: 'Cc', value: spec.cc.map(fmt).join(', ') }] : []),
    { name: 'Subject', value: spec.subject },
    { name: 'Date', value: spec.date.toUTCString().replace('GMT', '+0000') },
    { name: 'Message-ID', value: spec.internetMessageId },
    { name: 'MIME-Version', value: '1.0' },
  ];
  h.push(
    boundary === undefined
      ? { name: 'Content-Type', value: 'text/plain; charset="utf-8"' }
      : { name: 'Content-Type', value: `multipart/mixed; boundary="${boundary}"` },
  );
  return h;
}

/** Deterministic filler for an attachment of `size` bytes (the bytes themselves never matter). */
function filler(seed: string, size: number): Buffer {
  const out = Buffer.alloc(size);
  let block = createHash('sha256').update(seed).digest();
  for (let o = 0; o < size; o += block.length) {
    block.copy(out, o, 0, Math.min(block.length, size - o));
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

function base64Lines(data: Buffer): string {
  const b64 = data.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 76) lines.push(b64.slice(i, i + 76));
  return lines.join('\r\n');
}

/** The message as MIME (`GET /messages/{id}/$value`). */
export function renderMime(m: StoredMessage): Buffer {
  const { spec } = m;
  const attachments = spec.attachments ?? [];
  const boundary = attachments.length > 0 ? `_000_${m.id.slice(-16)}_` : undefined;
  const head = headerLines(spec, boundary)
    .map((l) => `${l.name}: ${l.value}`)
    .join('\r\n');
  const text = spec.text.replace(/\r?\n/g, '\r\n');
  if (boundary === undefined) return Buffer.from(`${head}\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${text}\r\n`);
  const parts = [
    `--${boundary}\r\nContent-Type: text/plain; charset="utf-8"\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${text}\r\n`,
    ...attachments.map(
      (a, i) =>
        `--${boundary}\r\nContent-Type: ${a.contentType}; name="${a.name}"\r\nContent-Disposition: attachment; filename="${a.name}"\r\n` +
        `Content-Transfer-Encoding: base64\r\n\r\n${base64Lines(filler(`${m.id}/${i}`, a.size))}\r\n`,
    ),
  ];
  return Buffer.from(`${head}\r\n\r\n${parts.join('')}--${boundary}--\r\n`);
}

const recipient = (a: { name?: string; address: string }) => ({ emailAddress: { name: a.name ?? a.address, address: a.address } });

/** The attachment resources (`$expand=attachments`); `contentBytes` only when the select asks for it (or there is none). */
export function attachmentResources(m: StoredMessage, select: string[] | undefined): Array<Record<string, unknown>> {
  return (m.spec.attachments ?? []).map((a, i) => {
    const full: Record<string, unknown> = {
      '@odata.type': '#microsoft.graph.fileAttachment',
      id: `${m.id}-att${i}`,
      name: a.name,
      contentType: a.contentType,
      size: a.size,
      isInline: false,
      lastModifiedDateTime: m.spec.date.toISOString(),
    };
    // The bytes only when asked for (they are what a client wants to avoid).
    if (select === undefined || select.includes('contentBytes')) full['contentBytes'] = filler(`${m.id}/${i}`, a.size).toString('base64');
    return pick(full, select, ['@odata.type', 'id']);
  });
}

/** The message resource, restricted to `select` (id always), body as text or html per the Prefer header. */
export function messageResource(
  m: StoredMessage,
  folderId: string,
  opts: { select?: string[]; bodyType: 'text' | 'html' },
): Record<string, unknown> {
  const { spec } = m;
  const html = `<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"></head><body><div>${escapeHtml(spec.text).replace(/\r?\n/g, '<br>')}</div></body></html>`;
  const full: Record<string, unknown> = {
    '@odata.etag': `W/"CQAAABYAAAA${m.changeKey}"`,
    id: m.id,
    createdDateTime: spec.date.toISOString(),
    lastModifiedDateTime: spec.date.toISOString(),
    changeKey: `CQAAABYAAAA${m.changeKey}`,
    categories: m.categories,
    receivedDateTime: spec.date.toISOString(),
    sentDateTime: spec.date.toISOString(),
    hasAttachments: (spec.attachments ?? []).length > 0,
    internetMessageId: spec.internetMessageId,
    subject: spec.subject,
    bodyPreview: spec.text.slice(0, 255),
    importance: 'normal',
    parentFolderId: folderId,
    conversationId: `conv-${createHash('sha256').update(spec.subject).digest('hex').slice(0, 16)}`,
    isRead: m.isRead,
    isDraft: false,
    body: opts.bodyType === 'text' ? { contentType: 'text', content: spec.text } : { contentType: 'html', content: html },
    sender: recipient(spec.from),
    from: recipient(spec.from),
    toRecipients: spec.to.map(recipient),
    ccRecipients: (spec.cc ?? []).map(recipient),
    bccRecipients: [],
    replyTo: [],
    internetMessageHeaders: headerLines(spec, (spec.attachments ?? []).length > 0 ? `_000_${m.id.slice(-16)}_` : undefined),
  };
  // internetMessageHeaders is returned only when selected (as Graph does).
  const select = opts.select ?? Object.keys(full).filter((k) => k !== 'internetMessageHeaders');
  return pick(full, select, ['@odata.etag', 'id']);
}

function pick(full: Record<string, unknown>, select: string[] | undefined, always: string[]): Record<string, unknown> {
  if (select === undefined) return full;
  const out: Record<string, unknown> = {};
  for (const k of [...always, ...select]) if (k in full) out[k] = full[k];
  return out;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A sample message: message `i` of a mailbox, with one attachment of `attachmentBytes` when given. */
export function sampleMessage(i: number, opts: { mailbox?: string; attachmentBytes?: number; tag?: string } = {}): MessageSpec {
  const to = opts.mailbox ?? 'support@contoso.test';
  const tag = opts.tag ?? 'graph';
  return {
    subject: `Order ${i}: where is my parcel? (${tag})`,
    from: { name: `Customer ${i}`, address: `customer${i}@example.com` },
    to: [{ name: 'Support', address: to }],
    internetMessageId: `<${tag}-${i}@mail.example.com>`,
    date: new Date(Date.UTC(2026, 2, 2, 10, 0, 0) + i * 60_000),
    text: `Hello,\n\nmy order ${i} has not arrived yet. Could you check where it is?\n\nThanks,\nCustomer ${i}\n`,
    ...(opts.attachmentBytes === undefined
      ? {}
      : { attachments: [{ name: `invoice-${i}.pdf`, contentType: 'application/pdf', size: opts.attachmentBytes }] }),
  };
}
