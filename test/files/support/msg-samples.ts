/** The specs of the committed .msg samples (samples/files/msg), written with msg-writer.ts. */
import type { MsgSpec } from './msg-writer.js';
import { compressRtf } from './rtf-compress.js';

const PIXEL_PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

export const MSG_SAMPLES: Record<string, MsgSpec> = {
  'properties.msg': {
    subject: 'Réunion budget 2024',
    senderName: 'Kim Example',
    senderEmail: 'kim@example.com',
    body: 'Hello team,\r\n\r\nthe budget meeting moves to Thursday.\r\n\r\nKim\r\n',
    bodyHtml: '<html><body><p>Hello team,</p><p>the budget meeting moves to Thursday.</p><p>Kim</p></body></html>',
    messageId: '<msg-properties-1@example.com>',
    submitTime: new Date('2024-06-03T14:05:00Z'),
    recipients: [
      { type: 'to', name: 'Lee Example', email: 'lee@example.com' },
      { type: 'to', email: 'max@example.com' },
      { type: 'cc', name: 'Nia Example', email: 'nia@example.com' },
    ],
    attachments: [
      { fileName: 'agenda.txt', mimeType: 'text/plain', content: Buffer.from('1. Budget\n2. Hiring\n') },
      { fileName: 'pixel.png', mimeType: 'image/png', content: PIXEL_PNG },
    ],
  },
  'transport-headers.msg': {
    subject: 'Re: Lunch?',
    senderName: 'Dave Example',
    senderEmail: 'dave@example.com',
    body: 'Friday works for me.\r\n',
    transportHeaders:
      'Received: from mx.example.com by mail.example.com; Tue, 05 Mar 2024 09:00:00 +0000\r\nFrom: Dave Example <dave@example.com>\r\nTo: Carol Example <carol@example.com>\r\nSubject: Re: Lunch?\r\nDate: Tue, 05 Mar 2024 09:00:00 +0000\r\nMessage-ID: <lunch-2@example.com>\r\nIn-Reply-To: <lunch-1@example.com>\r\nReferences: <lunch-1@example.com>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative;\r\n boundary="old-boundary"\r\n\r\n',
    recipients: [{ type: 'to', name: 'Carol Example', email: 'carol@example.com' }],
  },
  'rtf-only.msg': {
    subject: 'Quarterly figures',
    senderName: 'Ola Example',
    senderEmail: 'ola@example.com',
    messageId: '<msg-rtf-only-1@example.com>',
    submitTime: new Date('2024-07-01T08:30:00Z'),
    // Written in Outlook's RTF editor: no plain body, no HTML, nothing encapsulated.
    rtfCompressed: compressRtf(
      String.raw`{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fswiss Calibri;}}\pard\plain\f0 Hello Pat,\par\par the figures for Q2 are in: revenue up 4 \'80 per seat.\par\par Ola\par}`,
    ),
    recipients: [{ type: 'to', name: 'Pat Example', email: 'pat@example.com' }],
  },
  'rtf-html.msg': {
    subject: 'Team lunch',
    senderName: 'Ola Example',
    senderEmail: 'ola@example.com',
    messageId: '<msg-rtf-html-1@example.com>',
    submitTime: new Date('2024-07-02T10:00:00Z'),
    // HTML mail as Outlook stores it when only the RTF body is kept: HTML encapsulated in RTF.
    rtfCompressed: compressRtf(
      String.raw`{\rtf1\ansi\ansicpg1252\fromhtml1 \deff0{\fonttbl{\f0\fswiss Arial;}}{\*\htmltag19 <html>}{\*\htmltag50 <body>}\htmlrtf {\htmlrtf0 {\*\htmltag64 <p>}Lunch on {\*\htmltag84 <b>}Friday{\*\htmltag92 </b>} at the caf\'e9?{\*\htmltag72 </p>}{\*\htmltag58 </body>}{\*\htmltag27 </html>}}}`,
    ),
    recipients: [{ type: 'to', email: 'team@example.com' }],
  },
};
