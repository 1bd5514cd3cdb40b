import { describe, expect, it } from 'vitest';
import { Comment as CommentSchema, type RawEmailDocument } from '../../src/model/index.js';
import { buildComment, withThreadPosition } from '../../src/preview/comment.js';

const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');

const RAW = [
  'From: =?UTF-8?Q?J=C3=BCrgen_M=C3=BCller?= <Juergen@Example.DE>',
  'To: Ann <ann@example.com>, bob@example.com',
  'Cc: carl@example.com',
  'Subject: =?UTF-8?Q?Re:_R=C3=BCckfrage?=',
  'Date: Tue, 05 Mar 2024 10:15:00 +0100',
  'Message-ID: <reply-1@example.de>',
  'In-Reply-To: <root@example.com>',
  'References: <root@example.com>',
].join('\n');

const BODY =
  'Passt, danke.\n\nViele Grüße\nJürgen\n\nAm Di., 5. März 2024 um 09:00 Uhr schrieb Ann <ann@example.com>:\n> Passt Donnerstag?\n';

function doc(overrides: Partial<RawEmailDocument['raw_email']> = {}, rest: Partial<RawEmailDocument> = {}): RawEmailDocument {
  return { raw_email: { headers: { raw: RAW }, body: { plain: BODY }, ...overrides }, comment_id: hex('<reply-1@example.de>'), ...rest };
}

describe('buildComment', () => {
  it('builds the comment the service would store', () => {
    const { comment, warnings } = buildComment(doc());
    expect(warnings).toEqual([]);
    expect(CommentSchema.safeParse(comment).success).toBe(true);
    expect(comment).toEqual({
      id: hex('<reply-1@example.de>'),
      timestamp: '2024-03-05T09:15:00.000Z',
      thread_id: hex('root@example.com'),
      messages: [
        {
          body: { text: 'Passt, danke.' },
          signature: { text: 'Viele Grüße\nJürgen' },
          subject: { text: 'Re: Rückfrage' },
          from: 'Jürgen Müller <Juergen@Example.DE>',
          to: ['Ann <ann@example.com>', 'bob@example.com'],
          cc: ['carl@example.com'],
          sent_at: '2024-03-05T09:15:00.000Z',
        },
      ],
      user_properties: {
        'string:Has Signature': 'true',
        'string:Sender': 'juergen@example.de',
        'string:Thread': hex('root@example.com'),
        'string:Message ID': 'reply-1@example.de',
        'string:Sender Domain': 'example.de',
        'number:Recipient Count': 3,
        'number:Participant Count': 4,
        'number:Position in Thread': 0,
      },
    });
  });

  it('leaves absent fields unset (no null, no empty)', () => {
    const { comment } = buildComment(
      { raw_email: { headers: { raw: 'X-Nothing: here' }, body: { plain: '' } } },
      { receivedAt: new Date('2024-01-01T00:00:00Z') },
    );
    expect(CommentSchema.safeParse(comment).success).toBe(true);
    expect(comment.messages[0]).toEqual({ body: { text: '' } });
    expect(comment.attachments).toBeUndefined();
    expect(Object.values(comment.user_properties).every((v) => v !== '')).toBe(true);
  });

  it('reads parsed headers (list values joined with a comma) and converts an HTML body to text', () => {
    const { comment } = buildComment({
      raw_email: {
        headers: {
          parsed: {
            From: 'a@example.com',
            To: ['b@example.com', 'c@example.com'],
            'Message-ID': 'abcdef@company.com',
            Date: 'Tue, 05 Mar 2024 10:15:00 +0000',
          },
        },
        body: {
          html: '<p>Hello <b>there</b></p><div class="gmail_quote">On Tue, Mar 5, 2024 at 9:00 AM B &lt;b@example.com&gt; wrote:<blockquote>old</blockquote></div>',
        },
      },
    });
    expect(comment.messages[0]?.to).toEqual(['b@example.com', 'c@example.com']);
    expect(comment.messages[0]?.body.text).toBe('Hello there');
    expect(comment.id).toBe(hex('abcdef@company.com'));
    expect(comment.user_properties['string:Message ID']).toBe('abcdef@company.com');
  });

  it('derives the id from the Message-ID as written when the document has none, else hashes', () => {
    const noId = doc({}, { comment_id: undefined });
    delete noId.comment_id;
    expect(buildComment(noId).comment.id).toBe(hex('<reply-1@example.de>'));
    const bare = buildComment({ raw_email: { headers: { raw: 'Subject: x' }, body: { plain: 'b' } } }, { receivedAt: new Date(0) }).comment;
    expect(bare.id).toMatch(/^[0-9a-f]{64}$/);
  });

  it('falls back to the newest Received date, then receivedAt, with a warning', () => {
    const received =
      'Received: from a by b; Tue, 5 Mar 2024 10:00:00 +0000\nReceived: from c by d; Tue, 5 Mar 2024 11:00:00 +0000\nSubject: x';
    const r1 = buildComment({ raw_email: { headers: { raw: received }, body: { plain: 'b' } } });
    expect(r1.comment.timestamp).toBe('2024-03-05T11:00:00.000Z');
    expect(r1.comment.messages[0]?.sent_at).toBeUndefined();
    expect(r1.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_DATE_MISSING']);
    const r2 = buildComment(
      { raw_email: { headers: { raw: 'Subject: x' }, body: { plain: 'b' } } },
      { receivedAt: new Date('2024-02-01T00:00:00Z') },
    );
    expect(r2.comment.timestamp).toBe('2024-02-01T00:00:00.000Z');
  });

  it('clamps dates outside 1950-2049 with a warning', () => {
    const old = buildComment({ raw_email: { headers: { raw: 'Date: Mon, 1 Jan 1900 00:00:00 +0000' }, body: { plain: 'b' } } });
    expect(old.comment.timestamp).toBe('1950-01-01T00:00:00.000Z');
    expect(old.comment.messages[0]?.sent_at).toBe('1950-01-01T00:00:00.000Z');
    expect(old.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_DATE_OUT_OF_RANGE']);
    const late = buildComment({ raw_email: { headers: { raw: 'Date: Fri, 1 Jan 2077 00:00:00 +0000' }, body: { plain: 'b' } } });
    expect(late.comment.timestamp).toBe('2049-12-31T23:59:59.000Z');
    expect(CommentSchema.safeParse(late.comment).success).toBe(true);
  });

  it('merges client properties; conflicting ones are dropped or override, with warnings', () => {
    const d = doc({}, { user_properties: { 'string:Mailbox': 'support', 'string:Sender': 'x@y', 'number:Position in Thread': 9 } });
    const dropped = buildComment(d);
    expect(dropped.comment.user_properties['string:Mailbox']).toBe('support');
    expect(dropped.comment.user_properties['string:Sender']).toBe('juergen@example.de');
    expect(dropped.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_PROPERTY_DROPPED', 'MAILGATE_WARN_PROPERTY_DROPPED']);
    const over = buildComment(d, { override: ['Sender'] });
    expect(over.comment.user_properties['string:Sender']).toBe('x@y');
    expect(over.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_PROPERTY_DROPPED', 'MAILGATE_WARN_PROPERTY_OVERRIDDEN']);
  });

  it('sets Position in Thread from the thread context, or later from computed thread properties', () => {
    expect(buildComment(doc(), { threadContext: { thread_position: 3 } }).comment.user_properties['number:Position in Thread']).toBe(3);
    const c = buildComment(doc()).comment;
    expect(withThreadPosition(c, 2).user_properties['number:Position in Thread']).toBe(2);
    expect(withThreadPosition(c, 2, ['Position in Thread'])).toBe(c);
  });

  it('copies attachments from the document', () => {
    const { comment } = buildComment(doc({ attachments: [{ name: 'a.pdf', size: 10, content_type: 'application/pdf' }] }));
    expect(comment.attachments).toEqual([{ name: 'a.pdf', size: 10, content_type: 'application/pdf' }]);
  });
});
