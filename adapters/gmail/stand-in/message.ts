/**
 * Messages of the Gmail stand-in, built from a spec into both shapes Gmail serves: the RFC 5322
 * bytes (`format=raw`) and the parsed MIME tree (`format=full`: each part's headers, a leaf's
 * decoded body as base64url `data`, an attachment only as `attachmentId` and `size`;
 * developers.google.com/workspace/gmail/api/reference/rest/v1/users.messages#MessagePart). The
 * two are made from the same spec here, not one from the other, so that a test comparing
 * mailgate's two read paths does not compare a parser with itself.
 */

export interface AttachmentSpec {
  name: string;
  contentType: string;
  size: number;
}

export interface MessageSpec {
  from: { name?: string; address: string };
  to: Array<{ name?: string; address: string }>;
  cc?: Array<{ name?: string; address: string }>;
  subject: string;
  date: Date;
  messageId: string;
  text: string;
  attachments?: AttachmentSpec[];
  /** When Gmail received it (the message's internalDate); default: when it is delivered to the stand-in. */
  receivedAt?: Date;
}

export interface PartTree {
  partId: string;
  mimeType: string;
  filename: string;
  headers: Array<{ name: string; value: string }>;
  body: { size: number; data?: string; attachmentId?: string };
  parts?: PartTree[];
}

export interface BuiltMessage {
  raw: Buffer;
  payload: PartTree;
  hasAttachment: boolean;
}

const addr = (a: { name?: string; address: string }) => (a.name ? `"${a.name.replace(/"/g, '')}" <${a.address}>` : a.address);

/** RFC 2047 for a non-ASCII header value. */
function encodeWord(v: string): string {
  return /^[\x20-\x7e]*$/.test(v) ? v : `=?UTF-8?B?${Buffer.from(v).toString('base64')}?=`;
}

/** Deterministic attachment bytes. */
function bytesOf(size: number, seed: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

const wrap = (b64: string) => b64.replace(/.{1,76}/g, '$&\r\n');

export function buildMessage(spec: MessageSpec, seed: number): BuiltMessage {
  const headers: Array<{ name: string; value: string }> = [
    { name: 'From', value: addr(spec.from) },
    { name: 'To', value: spec.to.map(addr).join(', ') },
    ...(spec.cc && spec.cc.length > 0 ? [{ name: 'Cc', value: spec.cc.map(addr).join(', ') }] : []),
    { name: 'Subject', value: encodeWord(spec.subject) },
    { name: 'Date', value: spec.date.toUTCString().replace('GMT', '+0000') },
    { name: 'Message-ID', value: spec.messageId },
    { name: 'MIME-Version', value: '1.0' },
  ];
  const text = Buffer.from(spec.text.replace(/\r?\n/g, '\r\n'), 'utf8');
  const textHeaders = [
    { name: 'Content-Type', value: 'text/plain; charset="UTF-8"' },
    { name: 'Content-Transfer-Encoding', value: 'base64' },
  ];
  const attachments = spec.attachments ?? [];
  const head = (hs: Array<{ name: string; value: string }>) => hs.map((h) => `${h.name}: ${h.value}`).join('\r\n');
  if (attachments.length === 0) {
    const all = [...headers, ...textHeaders];
    return {
      raw: Buffer.from(`${head(all)}\r\n\r\n${wrap(text.toString('base64'))}`),
      payload: {
        partId: '',
        mimeType: 'text/plain',
        filename: '',
        headers: all,
        body: { size: text.length, data: text.toString('base64url') },
      },
      hasAttachment: false,
    };
  }
  const boundary = `b_${seed.toString(16)}_mixed`;
  const top = [...headers, { name: 'Content-Type', value: `multipart/mixed; boundary="${boundary}"` }];
  const parts: PartTree[] = [
    {
      partId: '0',
      mimeType: 'text/plain',
      filename: '',
      headers: textHeaders,
      body: { size: text.length, data: text.toString('base64url') },
    },
  ];
  const chunks = [`${head(top)}\r\n\r\n--${boundary}\r\n${head(textHeaders)}\r\n\r\n${wrap(text.toString('base64'))}`];
  attachments.forEach((a, i) => {
    const bytes = bytesOf(a.size, seed + i);
    const hs = [
      { name: 'Content-Type', value: `${a.contentType}; name="${encodeWord(a.name)}"` },
      { name: 'Content-Disposition', value: `attachment; filename="${encodeWord(a.name)}"` },
      { name: 'Content-Transfer-Encoding', value: 'base64' },
    ];
    chunks.push(`--${boundary}\r\n${head(hs)}\r\n\r\n${wrap(bytes.toString('base64'))}`);
    parts.push({
      partId: String(i + 1),
      mimeType: a.contentType,
      filename: a.name,
      headers: hs,
      body: { size: a.size, attachmentId: `ANGjdJ_${seed}_${i}` },
    });
  });
  chunks.push(`--${boundary}--\r\n`);
  return {
    raw: Buffer.from(chunks.join('')),
    payload: { partId: '', mimeType: 'multipart/mixed', filename: '', headers: top, body: { size: 0 }, parts },
    hasAttachment: true,
  };
}

/** A plain support message, number `i`; `attachmentBytes` adds one PDF of that size. */
export function sampleMessage(i: number, opts: { mailbox?: string; tag?: string; attachmentBytes?: number } = {}): MessageSpec {
  const tag = opts.tag ?? 'sample';
  return {
    from: { name: `Customer ${i}`, address: `customer${i}@example.com` },
    to: [{ address: opts.mailbox ?? 'support@example.test' }],
    subject: `Order ${i}: where is my parcel? (${tag})`,
    date: new Date(Date.UTC(2026, 0, 1, 8, 0, 0) + i * 60_000),
    messageId: `<${tag}-${i}@example.com>`,
    text: `Hello,\n\nmy order ${i} has not arrived yet. Could you check?\n\nThanks,\nCustomer ${i}\n`,
    ...(opts.attachmentBytes === undefined
      ? {}
      : { attachments: [{ name: `invoice-${i}.pdf`, contentType: 'application/pdf', size: opts.attachmentBytes }] }),
  };
}
