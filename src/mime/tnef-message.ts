/**
 * A message read from TNEF (tnef.ts: an e-mail attached inside a `winmail.dat`) → RFC 5322
 * bytes, by the rules of the Outlook readers (msg.ts, pst-message.ts): the header block is the
 * transport headers where Exchange kept them (less the MIME structure fields: the body is
 * rebuilt), else built from the properties with the synthesized-headers marker; the body is the
 * plain and HTML bodies, else the RTF body; attachments are stub parts carrying their size.
 */
import { createHash } from 'node:crypto';
import iconv from 'iconv-lite';
import { htmlToText } from './html.js';
import { bodyTexts, encodeWord, mailbox, multipart, textPart, transportHeaders } from './msg.js';
import { compressedRtfBody } from './rtf.js';
import { synthesizedLine } from './synthesized.js';
import { bin, date, num, str, type TnefAttachment, type TnefMessage, type TnefProps } from './tnef.js';

const PR = {
  SUBJECT: 0x0037,
  CLIENT_SUBMIT_TIME: 0x0039,
  SENT_REPRESENTING_NAME: 0x0042,
  SENT_REPRESENTING_EMAIL: 0x0065,
  TRANSPORT_HEADERS: 0x007d,
  SENDER_NAME: 0x0c1a,
  SENDER_EMAIL: 0x0c1f,
  RECIPIENT_TYPE: 0x0c15,
  DELIVERY_TIME: 0x0e06,
  ATTACH_SIZE: 0x0e20,
  BODY: 0x1000,
  RTF_COMPRESSED: 0x1009,
  HTML: 0x1013,
  INTERNET_MESSAGE_ID: 0x1035,
  IN_REPLY_TO: 0x1042,
  DISPLAY_NAME: 0x3001,
  ADDRTYPE: 0x3002,
  EMAIL: 0x3003,
  CREATION_TIME: 0x3007,
  ATTACH_DATA: 0x3701,
  ATTACH_FILENAME: 0x3704,
  ATTACH_LONG_FILENAME: 0x3707,
  ATTACH_MIME_TAG: 0x370e,
  ATTACH_CONTENT_ID: 0x3712,
  SMTP_ADDRESS: 0x39fe,
  INTERNET_CPID: 0x3fde,
  SENDER_SMTP: 0x5d01,
  SENT_REPRESENTING_SMTP: 0x5d02,
};

const smtpOf = (p: TnefProps, smtpId: number, emailId: number, typeId?: number): string | undefined => {
  const direct = str(p, smtpId);
  if (direct) return direct;
  const email = str(p, emailId);
  const type = typeId === undefined ? undefined : str(p, typeId);
  return email && (type?.toUpperCase() === 'SMTP' || email.includes('@')) ? email : undefined;
};

const rfcDate = (d: Date | undefined) => d?.toUTCString().replace(/GMT$/, '+0000');

function propertyHeaders(m: TnefMessage, bodyText: string): string[] {
  const p = m.props;
  const out: string[] = [];
  const from =
    mailbox(str(p, PR.SENDER_NAME), smtpOf(p, PR.SENDER_SMTP, PR.SENDER_EMAIL)) ??
    mailbox(str(p, PR.SENT_REPRESENTING_NAME), smtpOf(p, PR.SENT_REPRESENTING_SMTP, PR.SENT_REPRESENTING_EMAIL));
  if (from) out.push(`From: ${from}`);
  const byType: Record<number, string[]> = { 1: [], 2: [], 3: [] };
  for (const r of m.recipients) {
    const box = mailbox(str(r, PR.DISPLAY_NAME), smtpOf(r, PR.SMTP_ADDRESS, PR.EMAIL, PR.ADDRTYPE));
    if (box !== undefined) (byType[num(r, PR.RECIPIENT_TYPE) ?? 1] ?? byType[1]!).push(box);
  }
  for (const [type, name] of [
    [1, 'To'],
    [2, 'Cc'],
    [3, 'Bcc'],
  ] as const) {
    if (byType[type]!.length > 0) out.push(`${name}: ${byType[type]!.join(',\r\n ')}`);
  }
  const subject = str(p, PR.SUBJECT);
  if (subject) out.push(`Subject: ${encodeWord(subject)}`);
  const when = rfcDate(date(p, PR.CLIENT_SUBMIT_TIME) ?? date(p, PR.DELIVERY_TIME) ?? date(p, PR.CREATION_TIME));
  if (when) out.push(`Date: ${when}`);
  const inReplyTo = str(p, PR.IN_REPLY_TO)?.trim();
  if (inReplyTo) out.push(`In-Reply-To: ${inReplyTo}`);
  let id = str(p, PR.INTERNET_MESSAGE_ID)?.trim();
  const built = ['From', 'To/Cc/Bcc', 'Subject', 'Date'];
  if (!id) {
    const hash = createHash('sha256').update(out.join('\r\n')).update('\0').update(bodyText).digest('hex').slice(0, 40);
    id = `<${hash}@tnef.mailgate.invalid>`;
    built.push('a deterministic Message-ID');
  } else built.push('Message-ID');
  out.push(`Message-ID: ${id}`);
  out.push(synthesizedLine(`${built.join(', ')} from the TNEF message's properties (no transport headers kept)`));
  return out;
}

function htmlOf(p: TnefProps): string | undefined {
  const html = bin(p, PR.HTML) ?? (typeof p.get(PR.HTML) === 'string' ? (p.get(PR.HTML) as string) : undefined);
  if (html === undefined) return undefined;
  if (typeof html === 'string') return html;
  const cp = num(p, PR.INTERNET_CPID);
  const label = cp === undefined || cp === 65001 ? 'utf-8' : `cp${cp}`;
  return iconv.decode(html, iconv.encodingExists(label) ? label : 'utf-8');
}

function stub(a: TnefAttachment, i: number): string {
  const p = a.props;
  let name: string;
  let type: string;
  let size: number;
  if (a.message !== undefined) {
    const subject = str(a.message.props, PR.SUBJECT);
    name = `${(str(p, PR.ATTACH_LONG_FILENAME) ?? subject ?? `message-${i + 1}`).replace(/[\\/:*?"<>|]/g, '_')}.msg`.replace(
      /\.msg\.msg$/i,
      '.msg',
    );
    type = 'application/vnd.ms-outlook';
    size = Math.max(0, num(p, PR.ATTACH_SIZE) ?? 0);
  } else {
    name = str(p, PR.ATTACH_LONG_FILENAME) ?? str(p, PR.ATTACH_FILENAME) ?? a.title ?? `attachment-${i + 1}.bin`;
    type = str(p, PR.ATTACH_MIME_TAG)?.trim() || 'application/octet-stream';
    size = a.data?.length ?? bin(p, PR.ATTACH_DATA)?.length ?? Math.max(0, num(p, PR.ATTACH_SIZE) ?? 0);
  }
  const enc = encodeWord(name).replace(/"/g, '');
  const cid = str(p, PR.ATTACH_CONTENT_ID);
  const cidLine = cid ? `Content-ID: <${cid.replace(/^<|>$/g, '')}>\r\n` : '';
  return `Content-Type: ${type}; name="${enc}"\r\nContent-Disposition: attachment; filename="${enc}"\r\n${cidLine}X-Mailgate-Omitted-Size: ${size}\r\n\r\n`;
}

/** The message as RFC 5322 bytes; `seed` makes the MIME boundaries deterministic. */
export function tnefToRfc822(m: TnefMessage, seed: string): { raw: Buffer; synthesized: boolean } {
  const plain = str(m.props, PR.BODY) ?? m.body;
  const texts = bodyTexts(plain, htmlOf(m.props), () => bin(m.props, PR.RTF_COMPRESSED));
  const transport = str(m.props, PR.TRANSPORT_HEADERS)?.trim();
  const headers = transport ? transportHeaders(transport) : propertyHeaders(m, plain ?? '');
  const text = texts.length === 0 ? textPart('plain', '') : texts.length === 1 ? texts[0]! : multipart('alternative', `alt-${seed}`, texts);
  const stubs = m.attachments.map(stub);
  const entity = stubs.length === 0 ? text : multipart('mixed', `mix-${seed}`, [text, ...stubs]);
  return { raw: Buffer.from(`${[...headers, 'MIME-Version: 1.0'].join('\r\n')}\r\n${entity}`, 'utf8'), synthesized: !transport };
}

/** The text a TNEF message carries as its body: the plain body, else its RTF body (HTML in it reduced to text). */
export function tnefBodyText(m: TnefMessage): string | undefined {
  const plain = str(m.props, PR.BODY) ?? m.body;
  if (plain) return plain;
  const rtf = bin(m.props, PR.RTF_COMPRESSED);
  const body = rtf === undefined ? undefined : compressedRtfBody(rtf);
  if (body === undefined) return undefined;
  return body.type === 'html' ? htmlToText(body.text) : body.text;
}
