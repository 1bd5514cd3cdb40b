/**
 * Sample messages a long-running service's parse workers parse while they wait for their first
 * real ones (pool option `warmUp`): a fresh worker runs the parser's code cold, unoptimized, and
 * its first hundred messages cost several times what later ones do. `mailgate serve` starts its
 * workers before its IMAP accounts have logged in, so that cost is then paid while the worker
 * would idle, not by the first mail. The shapes cover the parser's common paths: plain text with
 * quotes and a signature, quoted-printable and base64 text in other charsets, HTML alternatives,
 * encoded words, threads, attachments in full and as stub parts (adapters/imap/assemble.ts).
 * Built from the index, so no two messages are the same text; nothing here is ever stored.
 */

const lines = (...parts: string[]) => parts.join('\r\n');

function headers(i: number, extra: string[]): string {
  const n = i % 97;
  return lines(
    `From: "Sender ${n}" <sender${n}@example.com>`,
    `To: support@example.org, "Team ${n % 7}" <team${n % 7}@example.org>`,
    ...(i % 3 === 0 ? [`Cc: =?UTF-8?B?${Buffer.from(`Zoë ${n}`).toString('base64')}?= <zoe${n}@example.net>`] : []),
    `Subject: ${i % 2 === 0 ? `Re: Order ${i} delayed` : `=?UTF-8?Q?Facture_n=C2=B0_${i}?=`}`,
    `Message-ID: <warm-${i}.${n}@example.com>`,
    ...(i % 2 === 0
      ? [`In-Reply-To: <warm-prev-${i}@example.com>`, `References: <warm-root-${n}@example.com>\r\n <warm-prev-${i}@example.com>`]
      : []),
    `Date: ${['Mon', 'Tue', 'Wed'][i % 3]}, ${1 + (i % 28)} Mar 2026 10:${String(i % 60).padStart(2, '0')}:00 +0100`,
    'MIME-Version: 1.0',
    ...extra,
  );
}

function prose(i: number): string {
  const sentence = `Hello team, parcel ${i} has not arrived and the tracking page shows no update since Monday. `;
  return sentence.repeat(2 + (i % 5));
}

function plain(i: number): string {
  const quote = i % 2 === 0 ? `\r\n\r\nOn Mon, 2 Mar 2026, Support wrote:\r\n> We shipped order ${i}.\r\n> Regards` : '';
  return lines(
    headers(i, ['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit']),
    '',
    prose(i) + quote,
    '',
    '-- ',
    `Sender ${i}`,
    '',
  );
}

function quotedPrintable(i: number): string {
  const body = `Bonjour, la facture ${i} est jointe. Cordialement,=0D=0A=E9quipe =\r\nsupport`;
  return lines(headers(i, ['Content-Type: text/plain; charset=iso-8859-1', 'Content-Transfer-Encoding: quoted-printable']), '', body, '');
}

function alternative(i: number): string {
  const b = `alt-${i}`;
  const html = `<html><body><p>${prose(i)}</p><blockquote>Earlier message ${i}</blockquote><div>Sender&nbsp;${i}</div></body></html>`;
  return lines(
    headers(i, [`Content-Type: multipart/alternative; boundary="${b}"`]),
    '',
    `--${b}`,
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(prose(i)).toString('base64'),
    `--${b}`,
    'Content-Type: text/html; charset=windows-1252',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    html.replace(/=/g, '=3D'),
    `--${b}--`,
    '',
  );
}

/** HTML alone (the body is then the HTML's text). */
function html(i: number): string {
  const page = `<html><head><style>p { margin: 0 }</style></head><body><p>Dear team,</p><p>${prose(i)}</p><br><div>Thanks &amp; regards,<br>Sender&nbsp;${i}</div></body></html>`;
  return lines(
    headers(i, ['Content-Type: text/html; charset=windows-1252', 'Content-Transfer-Encoding: quoted-printable']),
    '',
    page.replace(/=/g, '=3D'),
    '',
  );
}

/** multipart/mixed with an attachment: in full (files, uploads) or as an IMAP stub part. */
function mixed(i: number, stub: boolean): string {
  const b = `mix-${i}`;
  const data = Buffer.alloc(600 + (i % 50), i % 251).toString('base64');
  const attachment = stub
    ? ['Content-Transfer-Encoding: base64', `X-Mailgate-Omitted-Size: ${100_000 + i}`, '', '']
    : ['Content-Transfer-Encoding: base64', '', data];
  return lines(
    headers(i, [`Content-Type: multipart/mixed; boundary="${b}"`]),
    '',
    `--${b}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Please find invoice ${i} attached. Kind regards.`,
    '',
    `--${b}`,
    `Content-Type: application/pdf; name="invoice-${i}.pdf"`,
    `Content-Disposition: attachment; filename="invoice-${i}.pdf"`,
    ...attachment,
    `--${b}--`,
    '',
  );
}

const SHAPES = [plain, (i: number) => mixed(i, true), quotedPrintable, html, plain, alternative, (i: number) => mixed(i, false)];

/** The `i`-th sample message (any i ≥ 0): the shapes in turn, each with its own text. */
export function warmUpMessage(i: number): Uint8Array {
  return Buffer.from(SHAPES[i % SHAPES.length]!(i), 'latin1');
}

/**
 * Sample messages each worker parses before its first real one, at most: measured on the
 * IMAP benchmark's mailboxes, the parser's cost per message is close to its steady level after
 * a few hundred (docs/parsing.md, "Worker pool").
 */
export const WARM_UP_MESSAGES = 300;
