import { describe, expect, it } from 'vitest';
import * as lib from '../../src/index.js';
import { isGatewayError } from '../../src/errors.js';
import { Comment as CommentSchema } from '../../src/model/index.js';
import { preview, previewSync } from '../../src/preview/index.js';

const RAW = Buffer.from(
  [
    'From: Ann <ann@example.com>',
    'To: bob@example.com',
    'Subject: Re: Lunch',
    'Message-ID: <r1@example.com>',
    'In-Reply-To: <root@example.com>',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Works for me.',
    '',
    'On Tue, Mar 5, 2024 at 10:15 AM Bob <bob@example.com> wrote:',
    '> Lunch at noon?',
    '',
  ].join('\r\n'),
);

describe('preview', () => {
  it('parses, builds the document and the comment, and concatenates the warnings', async () => {
    const r = await preview(RAW, { receivedAt: new Date('2024-03-05T12:00:00Z'), userProperties: { 'string:Mailbox': 'sales' } });
    expect(r).toEqual(previewSync(RAW, { receivedAt: new Date('2024-03-05T12:00:00Z'), userProperties: { 'string:Mailbox': 'sales' } }));
    expect(CommentSchema.safeParse(r.comment).success).toBe(true);
    expect(r.comment.id).toBe(r.document.comment_id);
    expect(r.comment.messages[0]?.body.text).toBe('Works for me.');
    expect(r.comment.user_properties['string:Mailbox']).toBe('sales');
    expect(r.comment.thread_id).toBe(Buffer.from('root@example.com').toString('hex'));
    expect(r.comment.timestamp).toBe('2024-03-05T12:00:00.000Z');
    expect(r.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_DATE_MISSING']);
    expect('plain' in r.document.raw_email.body && r.document.raw_email.body.plain).toContain('Lunch at noon?');
  });

  it('applies the size budget before parsing', () => {
    let code: string | undefined;
    try {
      previewSync(RAW, { maxMessageBytes: 10 });
    } catch (err) {
      if (isGatewayError(err)) code = err.code;
    }
    expect(code).toBe('MAILGATE_ERR_MIME_TOO_LARGE');
  });

  it('is exported from the library entry with the lower-level pieces', () => {
    for (const name of [
      'preview',
      'previewSync',
      'parseMessage',
      'buildDocument',
      'buildComment',
      'computeThreadProperties',
      'threadIdFor',
      'splitReply',
    ] as const) {
      expect(typeof lib[name]).toBe('function');
    }
    expect(lib.Comment).toBe(CommentSchema);
  });

  it('warns once per message about bogus charsets in encoded-words, wherever they are (bogus-encoded-word-charset regression)', () => {
    const subjectOnly = previewSync(
      Buffer.from('From: =?x-bogus?Q?J=FCrgen?= <j@x.de>\nSubject: =?x-bogus?B?w6Rww6Q=?=\nMessage-ID: <bw@x>\n\nok\n'),
    );
    expect(subjectOnly.comment.messages[0]!.subject).toEqual({ text: 'äpä' });
    expect(subjectOnly.comment.messages[0]!.from).toBe('Jürgen <j@x.de>');
    expect(subjectOnly.warnings.filter((w) => w.code === 'MAILGATE_WARN_CHARSET_FALLBACK')).toHaveLength(1);
    const clean = previewSync(
      Buffer.from('From: =?utf-8?Q?J=C3=BCrgen?= <j@x.de>\nSubject: =?iso-8859-1?Q?caf=E9?=\nMessage-ID: <c@x>\n\nok\n'),
    );
    expect(clean.warnings.map((w) => w.code)).not.toContain('MAILGATE_WARN_CHARSET_FALLBACK');
  });
});
