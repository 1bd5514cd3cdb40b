/**
 * A message read through `$select`/`$expand=attachments` instead of `$value`, written as an RFC
 * 5322 message that gives the document the MIME path gives where it matters: the message's
 * transport headers (`internetMessageHeaders`, MIME structure headers left out), its body as
 * Graph renders it in text, and each attachment as a stub part — its name and type, an empty
 * body and `X-Mailgate-Omitted-Size` with its size (docs/imap.md, "Attachments stay on the
 * server"), so that no attachment byte crosses the wire. A message without transport headers
 * (Exchange keeps none for some internal mail) gets From, To, Cc, Subject, Date and Message-ID
 * from its properties.
 */

export interface GraphRecipient {
  emailAddress?: { name?: string; address?: string };
}

export interface GraphAttachment {
  '@odata.type'?: string;
  name?: string;
  contentType?: string;
  size?: number;
  isInline?: boolean;
}

export interface GraphMessage {
  id: string;
  subject?: string;
  from?: GraphRecipient;
  toRecipients?: GraphRecipient[];
  ccRecipients?: GraphRecipient[];
  sentDateTime?: string;
  receivedDateTime?: string;
  internetMessageId?: string;
  internetMessageHeaders?: Array<{ name: string; value: string }>;
  body?: { contentType?: string; content?: string };
  attachments?: GraphAttachment[];
}

/** What the JSON path selects, and the attachment metadata it expands (never `contentBytes`). */
export const JSON_SELECT =
  'subject,from,toRecipients,ccRecipients,sentDateTime,receivedDateTime,internetMessageId,internetMessageHeaders,body,hasAttachments';
export const ATTACHMENT_EXPAND = 'attachments($select=name,contentType,size,isInline)';

const STRUCTURE = new Set(['content-type', 'content-transfer-encoding', 'mime-version']);

const address = (r: GraphRecipient | undefined): string | undefined => {
  const a = r?.emailAddress;
  if (!a?.address) return undefined;
  return a.name && a.name !== a.address ? `${quoteName(a.name)} <${a.address}>` : `<${a.address}>`;
};

function quoteName(name: string): string {
  return /^[\w .!#$%&'*+/=?^`{|}~-]*$/.test(name) ? name : `"${name.replace(/(["\\])/g, '\\$1')}"`;
}

/** A header value on one line (folded values come unfolded from Graph; CR/LF never pass). */
const line = (v: string) => v.replace(/\r?\n[ \t]*/g, ' ').replace(/[\r\n]/g, ' ');

function headerBlock(m: GraphMessage): string[] {
  const given = (m.internetMessageHeaders ?? []).filter((h) => h.name && !STRUCTURE.has(h.name.toLowerCase()));
  const out = given.map((h) => `${h.name}: ${line(h.value)}`);
  const has = (n: string) => given.some((h) => h.name.toLowerCase() === n);
  const date = m.sentDateTime ?? m.receivedDateTime;
  const synth: Array<[string, string | undefined]> = [
    ['from', address(m.from)],
    ['to', (m.toRecipients ?? []).map(address).filter(Boolean).join(', ') || undefined],
    ['cc', (m.ccRecipients ?? []).map(address).filter(Boolean).join(', ') || undefined],
    ['subject', m.subject],
    ['date', date === undefined ? undefined : new Date(date).toUTCString().replace('GMT', '+0000')],
    ['message-id', m.internetMessageId],
  ];
  for (const [name, value] of synth) {
    if (value !== undefined && !has(name))
      out.push(`${name.replace(/(^|-)\w/g, (c) => c.toUpperCase()).replace('Id', 'ID')}: ${line(value)}`);
  }
  return out;
}

/** RFC 2231 for a name that is not plain ASCII, else a quoted string. */
function param(key: string, value: string): string {
  if (/^[\x20-\x7e]*$/.test(value) && !/["\\]/.test(value)) return `${key}="${value}"`;
  return `${key}*=utf-8''${encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

const safeType = (t: string | undefined) => (t !== undefined && /^[\w.+-]+\/[\w.+-]+$/.test(t) ? t : 'application/octet-stream');

/** The RFC 5322 message of a JSON-path read. */
export function assembleMessage(m: GraphMessage): Buffer {
  const head = headerBlock(m);
  const html = (m.body?.contentType ?? 'text').toLowerCase() === 'html';
  const text = (m.body?.content ?? '').replace(/\r?\n/g, '\r\n');
  const bodyPart = [`Content-Type: text/${html ? 'html' : 'plain'}; charset="utf-8"`, 'Content-Transfer-Encoding: 8bit', '', text].join(
    '\r\n',
  );
  const attachments = m.attachments ?? [];
  if (attachments.length === 0) return Buffer.from([...head, 'MIME-Version: 1.0', bodyPart, ''].join('\r\n'));
  const boundary = `=_mailgate_${m.id.replace(/[^A-Za-z0-9]/g, '').slice(-24)}`;
  const parts = attachments.map((a, i) => {
    const name = a.name ?? `attachment-${i + 1}`;
    return [
      `--${boundary}`,
      `Content-Type: ${safeType(a.contentType)}; ${param('name', name)}`,
      `Content-Disposition: ${a.isInline === true ? 'inline' : 'attachment'}; ${param('filename', name)}`,
      'Content-Transfer-Encoding: base64',
      `X-Mailgate-Omitted-Size: ${Math.max(0, Math.floor(a.size ?? 0))}`,
      '',
      '',
    ].join('\r\n');
  });
  return Buffer.from(
    [
      ...head,
      'MIME-Version: 1.0',
      `Content-Type: multipart/mixed; boundary="${boundary}"`,
      '',
      `--${boundary}`,
      bodyPart,
      ...parts,
      `--${boundary}--`,
      '',
    ].join('\r\n'),
  );
}
