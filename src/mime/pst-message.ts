/**
 * One Outlook item of a PST/OST → RFC 5322 bytes. The header block is the transport headers
 * where Exchange kept them (less the MIME structure fields: the body is rebuilt); otherwise
 * (sent items, drafts, items made in Outlook) it is built from the item's properties — sender,
 * recipients by type, subject, dates, Message-ID (a deterministic one when the item has none),
 * In-Reply-To, References, Thread-Index — with the synthesized-headers marker, which the
 * document turns into a warning. The body: plain, HTML, else the RTF body (src/mime/rtf.ts).
 * Attachments and embedded messages become stub parts carrying their size
 * (X-Mailgate-Omitted-Size): metadata only, their bytes are never read.
 */
import { createHash } from 'node:crypto';
import type { PSTAttachment, PSTMessage } from 'pst-extractor';
import { bodyTexts, encodeWord, mailbox, multipart, textPart, transportHeaders } from './msg.js';
import { synthesizedLine } from './synthesized.js';

const PR_RTF_COMPRESSED = 0x1009;
const PR_SENDER_SMTP_ADDRESS = 0x5d01;
const PR_SENT_REPRESENTING_SMTP_ADDRESS = 0x5d02;
const PR_INTERNET_REFERENCES = 0x1039;
const PR_CONVERSATION_INDEX = 0x0071;
const PR_ATTACH_DATA_BIN = 0x3701;
const ATTACH_EMBEDDED_MSG = 5;

/** The reader's protected accessors, reached where its getters stop short. */
interface Raw {
  getStringItem(id: number): string;
  getBinaryItem(id: number): Buffer | null;
  pstTableItems: Map<number, { data: Buffer; isExternalValueReference: boolean; entryValueReference: number }> | null;
  localDescriptorItems: Map<number, { getData(): Buffer }> | null;
}
const raw = (m: PSTMessage | PSTAttachment) => m as unknown as Raw;

const smtp = (address: string | undefined, type: string | undefined, smtpAddress?: string): string | undefined => {
  if (smtpAddress) return smtpAddress;
  if (address && (type?.toUpperCase() === 'SMTP' || address.includes('@'))) return address;
  return undefined;
};

/** The compressed RTF body's bytes, inline or in a subnode; undefined when there is none. */
function rtfBytes(m: PSTMessage): Uint8Array | undefined {
  const item = raw(m).pstTableItems?.get(PR_RTF_COMPRESSED);
  if (item === undefined) return undefined;
  if (item.data.length > 0) return item.data;
  return raw(m).localDescriptorItems?.get(item.entryValueReference)?.getData();
}

function rfcDate(d: Date | null): string | undefined {
  return d && Number.isFinite(d.getTime()) ? d.toUTCString().replace(/GMT$/, '+0000') : undefined;
}

function recipients(m: PSTMessage): string[] {
  const byType: Record<number, string[]> = { 1: [], 2: [], 3: [] };
  for (let i = 0; i < m.numberOfRecipients; i++) {
    const r = m.getRecipient(i);
    if (r === null) continue;
    const box = mailbox(r.displayName, smtp(r.emailAddress, r.addrType, r.smtpAddress));
    if (box !== undefined) (byType[r.recipientType] ?? byType[1]!).push(box);
  }
  const out: string[] = [];
  for (const [type, name] of [
    [1, 'To'],
    [2, 'Cc'],
    [3, 'Bcc'],
  ] as const) {
    if (byType[type]!.length > 0) out.push(`${name}: ${byType[type]!.join(',\r\n ')}`);
  }
  return out;
}

/** Headers from the properties; the Message-ID, when the item has none, is a hash of what was built and of the body. */
function propertyHeaders(m: PSTMessage, bodyText: string): string[] {
  const out: string[] = [];
  const senderSmtp = smtp(m.senderEmailAddress, m.senderAddrtype, raw(m).getStringItem(PR_SENDER_SMTP_ADDRESS));
  const from =
    mailbox(m.senderName, senderSmtp) ??
    mailbox(
      m.sentRepresentingName,
      smtp(m.sentRepresentingEmailAddress, m.sentRepresentingAddressType, raw(m).getStringItem(PR_SENT_REPRESENTING_SMTP_ADDRESS)),
    );
  if (from) out.push(`From: ${from}`);
  out.push(...recipients(m));
  if (m.subject) out.push(`Subject: ${encodeWord(m.subject)}`);
  const date = rfcDate(m.clientSubmitTime) ?? rfcDate(m.messageDeliveryTime) ?? rfcDate(m.creationTime);
  if (date) out.push(`Date: ${date}`);
  const inReplyTo = m.inReplyToId.trim();
  if (inReplyTo) out.push(`In-Reply-To: ${inReplyTo}`);
  const references = raw(m).getStringItem(PR_INTERNET_REFERENCES).trim();
  if (references) out.push(`References: ${references}`);
  const threadIndex = raw(m).getBinaryItem(PR_CONVERSATION_INDEX);
  if (threadIndex && threadIndex.length >= 22) out.push(`Thread-Index: ${threadIndex.toString('base64')}`);
  let id = m.internetMessageId.trim();
  const built = ['From', 'To/Cc/Bcc', 'Subject', 'Date'];
  if (!id) {
    const hash = createHash('sha256').update(out.join('\r\n')).update('\0').update(bodyText).digest('hex').slice(0, 40);
    id = `<${hash}@pst.mailgate.invalid>`;
    built.push('a deterministic Message-ID');
  } else built.push('Message-ID');
  out.push(`Message-ID: ${id}`);
  out.push(synthesizedLine(`${built.join(', ')} from the Outlook item's properties (no transport headers kept)`));
  return out;
}

function attachmentSize(a: PSTAttachment): number {
  try {
    const size = a.filesize;
    if (Number.isInteger(size) && size > 0) return size;
  } catch {
    // A data reference the reader cannot follow: the attachment's own size property instead.
  }
  return Math.max(0, a.size);
}

/** A stub part: the attachment's name, type and size; its bytes stay in the file. */
function attachmentStub(m: PSTMessage, i: number): string {
  const a = m.getAttachment(i);
  let name: string;
  let type: string;
  if (a.attachMethod === ATTACH_EMBEDDED_MSG) {
    const subject = (() => {
      try {
        return a.embeddedPSTMessage?.subject ?? '';
      } catch {
        return '';
      }
    })();
    name = `${(a.longFilename || a.filename || subject || `message-${i + 1}`).replace(/[\\/:*?"<>|]/g, '_')}${/\.msg$/i.test(a.longFilename) ? '' : '.msg'}`;
    type = 'application/vnd.ms-outlook';
  } else {
    name = a.longFilename || a.filename || a.displayName || `attachment-${i + 1}.bin`;
    type = a.mimeTag.trim() || 'application/octet-stream';
  }
  const size = a.attachMethod === ATTACH_EMBEDDED_MSG ? Math.max(0, a.size) : attachmentSize(a);
  const enc = encodeWord(name).replace(/"/g, '');
  const cid = a.contentId ? `Content-ID: <${a.contentId.replace(/^<|>$/g, '')}>\r\n` : '';
  const disposition = a.contentId && !raw(a).pstTableItems?.has(PR_ATTACH_DATA_BIN) ? 'inline' : 'attachment';
  return `Content-Type: ${type}; name="${enc}"\r\nContent-Disposition: ${disposition}; filename="${enc}"\r\n${cid}X-Mailgate-Omitted-Size: ${size}\r\n\r\n`;
}

export interface PstConverted {
  raw: Buffer;
  /** The header block was built from properties (no transport headers). */
  synthesized: boolean;
}

/** The item as RFC 5322 bytes; `seed` makes the MIME boundaries deterministic (the item's position in its file). */
export function pstToRfc822(m: PSTMessage, seed: string): PstConverted {
  const texts = bodyTexts(m.body, m.bodyHTML || undefined, () => rtfBytes(m));
  const transport = m.transportMessageHeaders.trim();
  const headers = transport ? transportHeaders(transport) : propertyHeaders(m, m.body || m.bodyHTML);
  const text = texts.length === 0 ? textPart('plain', '') : texts.length === 1 ? texts[0]! : multipart('alternative', `alt-${seed}`, texts);
  const stubs = Array.from({ length: m.hasAttachments ? m.numberOfAttachments : 0 }, (_, i) => attachmentStub(m, i));
  const entity = stubs.length === 0 ? text : multipart('mixed', `mix-${seed}`, [text, ...stubs]);
  return { raw: Buffer.from(`${[...headers, 'MIME-Version: 1.0'].join('\r\n')}\r\n${entity}`, 'utf8'), synthesized: !transport };
}
