/** The messages of the IMAP benchmarks' mailboxes (bench:imap, bench:imap-read). */
import { randomBytes } from 'node:crypto';

export function textMessage(i: number): Buffer {
  const para = `Hello team, order ${i} has not arrived yet and the tracking page shows no update since Monday. `.repeat(12);
  return Buffer.from(
    [
      `From: Customer ${i % 997} <c${i % 997}@example.com>`,
      'To: support@example.org',
      `Subject: Order ${i}`,
      `Message-ID: <bench-${i}@example.com>`,
      'Date: Mon, 02 Mar 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      para,
      '',
      '-- ',
      'Customer',
      '',
    ].join('\r\n'),
  );
}

export function attachmentMessage(i: number, kb: number): Buffer {
  const b = `b-${i}`;
  const data = randomBytes(kb * 1024)
    .toString('base64')
    .replace(/.{76}/g, '$&\r\n');
  return Buffer.from(
    [
      `From: Customer ${i % 997} <c${i % 997}@example.com>`,
      'To: support@example.org',
      `Subject: Invoice ${i}`,
      `Message-ID: <bench-att-${i}@example.com>`,
      'Date: Mon, 02 Mar 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      `Content-Type: multipart/mixed; boundary="${b}"`,
      '',
      `--${b}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Please find invoice ${i} attached. Kind regards.`,
      '',
      `--${b}`,
      `Content-Type: application/pdf; name="invoice-${i}.pdf"`,
      'Content-Transfer-Encoding: base64',
      `Content-Disposition: attachment; filename="invoice-${i}.pdf"`,
      '',
      data,
      `--${b}--`,
      '',
    ].join('\r\n'),
  );
}

/** 30 % of the messages (3 of every 10) carry an attachment of `kb` KiB, the rest are text only. */
export function mixedMessage(i: number, kb: number): Buffer {
  return i % 10 < 3 ? attachmentMessage(i, kb) : textMessage(i);
}
