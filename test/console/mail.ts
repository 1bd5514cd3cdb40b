/** The messages the console's browser tests ingest. */

function mail(headers: string[], body: string): string {
  return [...headers, '', body, ''].join('\r\n');
}

export const FIRST = mail(
  [
    'From: Ann Example <ann@example.com>',
    'To: Support <support@example.com>',
    'Subject: Invoice 1234 is wrong',
    'Date: Tue, 03 Mar 2026 10:15:00 +0000',
    'Message-ID: <invoice-1234@example.com>',
    'Content-Type: text/plain; charset=utf-8',
  ],
  [
    'Hello,',
    '',
    'the amount on invoice 1234 is twice what we agreed.',
    '',
    '--',
    'Ann Example',
    'Accounts, Example Ltd',
    '',
    'On Mon, 2 Mar 2026 at 09:00, Support <support@example.com> wrote:',
    '> Please find attached your invoice.',
  ].join('\r\n'),
);

export const REPLY = mail(
  [
    'From: Support <support@example.com>',
    'To: Ann Example <ann@example.com>',
    'Subject: Re: Invoice 1234 is wrong',
    'Date: Tue, 03 Mar 2026 11:45:00 +0000',
    'Message-ID: <reply-1@example.com>',
    'In-Reply-To: <invoice-1234@example.com>',
    'References: <invoice-1234@example.com>',
    'Content-Type: text/plain; charset=utf-8',
  ],
  ['Hi Ann, we corrected it.', '', '> the amount on invoice 1234 is twice what we agreed.'].join('\r\n'),
);

export function plain(n: string, subject: string, from = 'Bob Builder <bob@example.org>', body = 'Where is my parcel?'): string {
  return mail(
    [
      `From: ${from}`,
      'To: support@example.com',
      `Subject: ${subject}`,
      'Date: Wed, 04 Mar 2026 08:00:00 +0000',
      `Message-ID: <${n}@example.org>`,
    ],
    body,
  );
}

/** Subject, names, body and attachment name all try to run script or navigate. */
export const HOSTILE = mail(
  [
    'From: "<img src=x onerror=alert(1)>" <evil@example.com>',
    'To: "<script>alert(2)</script>" <victim@example.com>',
    'Subject: <script>alert(3)</script><img src=x onerror="window.__pwned=1"> urgent',
    'Date: Tue, 03 Mar 2026 12:00:00 +0000',
    'Message-ID: <hostile@example.com>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
  ],
  [
    '--b1',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<html><body><p>Click <a href="javascript:alert(4)">javascript:alert(4)</a></p><script>alert(5)</script>',
    '<img src=x onerror="alert(6)"><iframe src="javascript:alert(7)"></iframe></body></html>',
    '--b1',
    'Content-Type: application/pdf; name="<img src=x onerror=alert(8)>.pdf"',
    'Content-Disposition: attachment; filename="<img src=x onerror=alert(8)>.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    'JVBERi0xLjQK',
    '--b1--',
  ].join('\r\n'),
);
