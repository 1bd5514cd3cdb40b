/**
 * A message read with `format=full` instead of `format=raw`, written back as an RFC 5322
 * message that gives the document the raw path gives where it matters. `format=full` returns
 * the MIME tree already parsed (developers.google.com/workspace/gmail/api/reference/rest/v1/
 * users.messages#MessagePart): every part's headers, and for a leaf its decoded body as base64url
 * `data` — or, for an attachment, only an `attachmentId` and its `size`, the bytes left on the
 * server. The tree is written again part by part with fresh boundaries: the message's own
 * headers (MIME structure headers replaced), text parts re-encoded as base64 of the decoded bytes
 * (their charset kept), and each attachment as a stub part — its headers, an empty body and
 * `X-Mailgate-Omitted-Size` with its size (docs/imap.md, "Attachments stay on the server").
 */

export interface MessagePartHeader {
  name: string;
  value: string;
}

export interface MessagePart {
  partId?: string;
  mimeType?: string;
  filename?: string;
  headers?: MessagePartHeader[];
  body?: { attachmentId?: string; size?: number; data?: string };
  parts?: MessagePart[];
}

export interface FullMessage {
  id: string;
  threadId?: string;
  labelIds?: string[];
  internalDate?: string;
  sizeEstimate?: number;
  historyId?: string;
  payload?: MessagePart;
}

const STRUCTURE = new Set(['content-type', 'content-transfer-encoding', 'mime-version']);

/** A header value on one line: CR/LF never pass. */
const line = (v: string) => v.replace(/\r?\n[ \t]*/g, ' ').replace(/[\r\n]/g, ' ');

const header = (p: MessagePart, name: string) => p.headers?.find((h) => h.name.toLowerCase() === name)?.value;

function wrap(b64: string): string {
  return b64.replace(/.{1,76}/g, '$&\r\n');
}

/** The part's own headers other than the structure ones (Content-Disposition, Content-ID, …). */
function ownHeaders(p: MessagePart, top: boolean): string[] {
  return (p.headers ?? [])
    .filter((h) => h.name && !STRUCTURE.has(h.name.toLowerCase()) && (top || h.name.toLowerCase().startsWith('content-')))
    .map((h) => `${h.name}: ${line(h.value)}`);
}

function contentType(p: MessagePart, boundary?: string): string {
  const given = header(p, 'content-type');
  const type = p.mimeType ?? 'text/plain';
  if (boundary !== undefined) return `Content-Type: ${type}; boundary="${boundary}"`;
  // Keep the parameters (charset, name) Gmail reports, never a boundary of a part that is no longer one.
  const params = given === undefined ? '' : given.replace(/^[^;]*/, '').replace(/;\s*boundary="?[^";]*"?/i, '');
  return `Content-Type: ${type}${line(params)}`;
}

function isAttachment(p: MessagePart): boolean {
  return p.body?.attachmentId !== undefined && p.body.data === undefined;
}

function partLines(p: MessagePart, top: boolean, path: string): string[] {
  const own = ownHeaders(p, top);
  if ((p.mimeType ?? '').startsWith('multipart/') && (p.parts?.length ?? 0) > 0) {
    const boundary = `=_mailgate_${path}`;
    const out = [...own, contentType(p, boundary), ''];
    p.parts!.forEach((child, i) => out.push(`--${boundary}`, ...partLines(child, false, `${path}_${i}`)));
    out.push(`--${boundary}--`, '');
    return out;
  }
  if (isAttachment(p)) {
    const ct = contentType(p);
    const named =
      header(p, 'content-disposition') === undefined && p.filename
        ? [`Content-Disposition: attachment; filename="${p.filename.replace(/["\\\r\n]/g, '_')}"`]
        : [];
    return [
      ...own,
      ...named,
      ct,
      'Content-Transfer-Encoding: base64',
      `X-Mailgate-Omitted-Size: ${Math.max(0, Math.floor(p.body?.size ?? 0))}`,
      '',
      '',
    ];
  }
  const bytes = Buffer.from(p.body?.data ?? '', 'base64url');
  return [...own, contentType(p), 'Content-Transfer-Encoding: base64', '', wrap(bytes.toString('base64'))];
}

/** The RFC 5322 message of a `format=full` read. */
export function assembleFull(m: FullMessage): Buffer {
  const lines = partLines(m.payload ?? {}, true, m.id.replace(/[^A-Za-z0-9]/g, '').slice(-24) || 'x');
  // MIME-Version goes with the message's headers: before the first blank line.
  lines.splice(lines.indexOf(''), 0, 'MIME-Version: 1.0');
  return Buffer.from(lines.join('\r\n'));
}
