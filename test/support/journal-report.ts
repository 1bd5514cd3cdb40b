/**
 * Exchange journal reports as Exchange writes them (envelope journaling, Exchange 2010 and
 * later: "Journal report" in the Exchange Server documentation): a multipart/mixed message with
 * `X-MS-Journal-Report`, a text/plain part listing the envelope one field a line
 * (`Sender`, `Subject`, `Message-Id`, then `To`/`Cc`/`Bcc`/`Recipient`, optionally followed by
 * `, Expanded: <list>` or `, Forwarded: <original recipient>`), and the original message,
 * unaltered, as a message/rfc822 part.
 */
import { PT, writeTnef, type TnefSpec } from './tnef-writer.js';
export interface ReportSpec {
  original: Buffer;
  sender: string;
  subject: string;
  messageId: string;
  /** Envelope lines after the header lines, e.g. `To: bob@contoso.com, Expanded: sales@contoso.com`. */
  lines: string[];
  /** Journal mailbox the report is addressed to. */
  journal?: string;
  boundary?: string;
}

export function journalReport(spec: ReportSpec): Buffer {
  const b = spec.boundary ?? 'journal-report-boundary';
  const body = [`Sender: ${spec.sender}`, `Subject: ${spec.subject}`, `Message-Id: ${spec.messageId}`, ...spec.lines].join('\r\n');
  return Buffer.concat([
    Buffer.from(
      [
        'From: Microsoft Exchange Server <postmaster@contoso.com>',
        `To: ${spec.journal ?? 'journal@contoso.com'}`,
        `Subject: ${spec.subject}`,
        'Date: Tue, 04 Jun 2024 10:00:05 +0000',
        `Message-ID: <report-${Math.abs(hash(body))}@contoso.com>`,
        'X-MS-Journal-Report:',
        'MIME-Version: 1.0',
        `Content-Type: multipart/mixed; boundary="${b}"`,
        '',
        `--${b}`,
        'Content-Type: text/plain; charset="us-ascii"',
        'Content-Transfer-Encoding: 7bit',
        '',
        body,
        '',
        `--${b}`,
        'Content-Type: message/rfc822',
        '',
        '',
      ].join('\r\n'),
    ),
    spec.original,
    Buffer.from(`\r\n--${b}--\r\n`),
  ]);
}

function hash(s: string): number {
  let h = 0;
  for (const c of s) h = (h * 31 + c.charCodeAt(0)) | 0;
  return h;
}

/** The original of the samples: To and Cc in its headers; the Bcc and list members only in the reports. */
export const ORIGINAL = Buffer.from(
  [
    'From: Alice <alice@contoso.com>',
    'To: Bob <bob@contoso.com>, Sales <sales@contoso.com>',
    'Cc: carol@contoso.com',
    'Subject: Budget 2025',
    'Date: Tue, 04 Jun 2024 10:00:00 +0000',
    'Message-ID: <budget-2025@contoso.com>',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'The budget is attached in spirit.',
    '',
  ].join('\r\n'),
);

/** Exchange wrote two reports for the original (two journaling servers): each lists its recipients. */
export const FIRST_REPORT = journalReport({
  original: ORIGINAL,
  sender: 'alice@contoso.com',
  subject: 'Budget 2025',
  messageId: '<budget-2025@contoso.com>',
  lines: ['To: bob@contoso.com', 'Cc: carol@contoso.com', 'Bcc: dave@contoso.com', 'To: erin@contoso.com, Expanded: sales@contoso.com'],
});

export const SECOND_REPORT = journalReport({
  original: ORIGINAL,
  sender: 'alice@contoso.com',
  subject: 'Budget 2025',
  messageId: '<budget-2025@contoso.com>',
  lines: ['To: frank@contoso.com, Expanded: sales@contoso.com', 'To: gina@fabrikam.com, Forwarded: bob@contoso.com'],
  boundary: 'second-report',
});

/**
 * A report in TNEF form, as Exchange sends one with Outlook rich text or to a domain that keeps
 * TNEF: multipart/mixed with the envelope as a text/plain part (unless `envelopeInTnef`, which
 * puts it in the TNEF's body instead) and `winmail.dat` (application/ms-tnef), whose attachment
 * is the original — an attached e-mail (embedded message) or, with `attachEml`, an .eml file.
 */
export function tnefJournalReport(spec: ReportSpec & { originalTnef: TnefSpec; envelopeInTnef?: boolean; attachEml?: boolean }): Buffer {
  const b = spec.boundary ?? 'tnef-report-boundary';
  const envelope = [`Sender: ${spec.sender}`, `Subject: ${spec.subject}`, `Message-Id: ${spec.messageId}`, ...spec.lines].join('\r\n');
  const original = spec.attachEml
    ? {
        props: [
          { type: PT.UNICODE, id: 0x3707, value: 'original.eml' },
          { type: PT.STRING8, id: 0x370e, value: 'message/rfc822' },
          { type: PT.LONG, id: 0x3705, value: 1 },
        ],
        data: spec.original,
      }
    : {
        props: [
          { type: PT.LONG, id: 0x3705, value: 5 },
          { type: PT.OBJECT, id: 0x3701, value: spec.originalTnef },
        ],
      };
  const tnef = writeTnef({
    props: [
      { type: PT.UNICODE, id: 0x0037, value: spec.subject },
      ...(spec.envelopeInTnef ? [{ type: PT.UNICODE, id: 0x1000, value: envelope }] : []),
    ],
    attachments: [original],
  });
  const text = spec.envelopeInTnef
    ? []
    : [`--${b}`, 'Content-Type: text/plain; charset="us-ascii"', 'Content-Transfer-Encoding: 7bit', '', envelope, ''];
  return Buffer.from(
    [
      'From: Microsoft Exchange Server <postmaster@contoso.com>',
      `To: ${spec.journal ?? 'journal@contoso.com'}`,
      `Subject: ${spec.subject}`,
      'Date: Tue, 04 Jun 2024 10:00:07 +0000',
      `Message-ID: <tnef-report-${Math.abs(hash(envelope))}@contoso.com>`,
      'X-MS-Journal-Report:',
      'MIME-Version: 1.0',
      `Content-Type: multipart/mixed; boundary="${b}"`,
      '',
      ...text,
      `--${b}`,
      'Content-Type: application/ms-tnef; name="winmail.dat"',
      'Content-Disposition: attachment; filename="winmail.dat"',
      'Content-Transfer-Encoding: base64',
      '',
      tnef.toString('base64').replace(/.{76}/g, '$&\r\n'),
      `--${b}--`,
      '',
    ].join('\r\n'),
  );
}

/** The original of the samples as Outlook keeps it: its transport headers, its plain body, one attachment. */
export const ORIGINAL_TNEF: TnefSpec = {
  props: [
    { type: PT.UNICODE, id: 0x0037, value: 'Budget 2025' },
    { type: PT.STRING8, id: 0x007d, value: ORIGINAL.toString('latin1').slice(0, ORIGINAL.indexOf('\r\n\r\n') + 2) },
    { type: PT.UNICODE, id: 0x1000, value: 'The budget is attached in spirit.\r\n' },
  ],
  attachments: [
    {
      props: [
        { type: PT.UNICODE, id: 0x3707, value: 'budget.xlsx' },
        { type: PT.STRING8, id: 0x370e, value: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' },
      ],
      data: Buffer.alloc(1234, 7),
    },
  ],
};
