/** Test messages: text-only, and multipart with (large) base64 attachments. */
import { randomBytes } from 'node:crypto';

export function textMessage(i: number, subject = `message ${i}`): string {
  return [
    `From: Sender ${i} <sender${i}@example.com>`,
    'To: support@example.com',
    `Subject: ${subject}`,
    `Message-ID: <msg-${i}@mailgate.test>`,
    'Date: Mon, 02 Mar 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Hello, this is message number ${i}.`,
    '',
  ].join('\r\n');
}

function base64Lines(data: Buffer, width = 76): string {
  const b64 = data.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += width) lines.push(b64.slice(i, i + width));
  return lines.join('\r\n');
}

export interface AttachmentSpec {
  bytes: number;
  name?: string;
  type?: string;
  inline?: boolean;
  width?: number;
}

/** multipart/mixed: multipart/alternative (plain + html) and the given base64 attachments. */
export function attachmentMessage(i: number, attachments: AttachmentSpec[], subject = `with attachments ${i}`): string {
  const outer = `outer-${i}-boundary`;
  const alt = `alt-${i}-boundary`;
  const parts = [
    [
      `--${outer}`,
      `Content-Type: multipart/alternative; boundary="${alt}"`,
      '',
      `--${alt}`,
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      `Plain body of message ${i} =E2=80=94 see attachment.`,
      '',
      `--${alt}`,
      'Content-Type: text/html; charset=utf-8',
      '',
      `<p>HTML body of message ${i}</p>`,
      `--${alt}--`,
      '',
    ].join('\r\n'),
  ];
  attachments.forEach((a, k) => {
    const name = a.name ?? `file-${k}.bin`;
    parts.push(
      [
        `--${outer}`,
        `Content-Type: ${a.type ?? 'application/octet-stream'}; name="${name}"`,
        `Content-Disposition: ${a.inline ? 'inline' : 'attachment'}; filename="${name}"`,
        ...(a.inline ? [`Content-ID: <img${k}@mailgate.test>`] : []),
        'Content-Transfer-Encoding: base64',
        '',
        base64Lines(randomBytes(a.bytes), a.width),
        '',
      ].join('\r\n'),
    );
  });
  return [
    `From: Sender ${i} <sender${i}@example.com>`,
    'To: support@example.com',
    `Subject: ${subject}`,
    `Message-ID: <att-${i}@mailgate.test>`,
    'Date: Mon, 02 Mar 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${outer}"`,
    '',
    'This is a multi-part message in MIME format.',
    '',
    parts.join(''),
    `--${outer}--`,
    '',
  ].join('\r\n');
}
