/**
 * The mailbox filter every pull kind shares: folder patterns (`*` one level, `**` any depth,
 * `/` whatever the server's separator), participants (address, `*@domain`, `domain`; never
 * the mailbox's own address), skip (auto-replies, mailing lists) and `since` as a date or a
 * duration counted back from the first sync.
 */
import { describe, expect, it } from 'vitest';
import { compileFilter, controlsOf, FILTER_HEADER_FIELDS, folderMatches, headerFields, sinceDate } from '../../src/controls/index.js';
import { imapAccountSchema } from '../../adapters/imap/config.js';

const mail = (headers: string) => Buffer.from(`${headers.replace(/\n/g, '\r\n')}\r\n\r\nbody\r\n`);
const account = (extra: Record<string, unknown>) =>
  imapAccountSchema.parse({ name: 'a', route: 'r', host: 'localhost', auth: { user: 'me@corp.example', pass: 'x' }, ...extra });

describe('folder patterns', () => {
  it('matches * on one level, ** on any depth, and INBOX in any case', () => {
    expect(folderMatches(['Archive/*'], 'Archive/2024')).toBe(true);
    expect(folderMatches(['Archive/*'], 'Archive/2024/Q1')).toBe(false);
    expect(folderMatches(['Archive/**'], 'Archive/2024/Q1')).toBe(true);
    expect(folderMatches(['Archive/**'], 'Archive')).toBe(true);
    expect(folderMatches(['**/Spam'], 'INBOX/Lists/Spam')).toBe(true);
    expect(folderMatches(['*/Spam'], 'INBOX/Lists/Spam')).toBe(false);
    expect(folderMatches(['Old*'], 'Old mail')).toBe(true);
    expect(folderMatches(['inbox/Lists'], 'INBOX.Lists', '.')).toBe(true);
    expect(folderMatches(['Sent'], 'Sent Items')).toBe(false);
  });

  it('reads / as the separator whatever the server uses', () => {
    const f = compileFilter(controlsOf(account({ exclude_folders: ['INBOX/Newsletters/**'] })));
    expect(f.folder('INBOX.Newsletters.Weekly', '.')).toBe(false);
    expect(f.folder('INBOX.Support', '.')).toBe(true);
  });
});

describe('participants', () => {
  const filter = (participants: Record<string, unknown>) => compileFilter(controlsOf(account({ participants })), ['me@corp.example']);

  it('drops a message when any participant matches deny', () => {
    const f = filter({ deny: ['*@newsletter.example', 'noreply@shop.example'] });
    expect(f.judge(mail('From: News <n@newsletter.example>\nTo: me@corp.example'))).toEqual({ keep: false, reason: 'participants' });
    expect(f.judge(mail('From: a@client.example\nCc: NoReply@Shop.Example'))).toEqual({ keep: false, reason: 'participants' });
    expect(f.judge(mail('From: a@client.example\nTo: me@corp.example'))).toEqual({ keep: true });
    // `*@domain` is that domain only.
    expect(f.judge(mail('From: a@mail.newsletter.example'))).toEqual({ keep: true });
  });

  it('keeps only mail with an allowed participant; a bare domain covers its subdomains', () => {
    const f = filter({ allow: ['client.example'] });
    expect(f.judge(mail('From: a@eu.client.example\nTo: me@corp.example'))).toEqual({ keep: true });
    expect(f.judge(mail('From: a@other.example\nTo: me@corp.example'))).toEqual({ keep: false, reason: 'participants' });
  });

  it("never counts the mailbox's own address", () => {
    const f = filter({ allow: ['corp.example'] });
    expect(f.judge(mail('From: me@corp.example\nTo: someone@else.example'))).toEqual({ keep: false, reason: 'participants' });
    expect(f.judge(mail('From: colleague@corp.example\nTo: me@corp.example'))).toEqual({ keep: true });
  });

  it('refuses a rule that is neither an address, *@domain nor a domain', () => {
    expect(() => account({ participants: { deny: ['*@*'] } })).toThrow();
    expect(() => account({ participants: { deny: ['a b@c'] } })).toThrow();
  });
});

describe('skip', () => {
  const f = compileFilter(controlsOf(account({ skip: ['auto_replies', 'mailing_lists'] })));

  it('skips auto-replies (Auto-Submitted other than no)', () => {
    expect(f.judge(mail('From: a@x.example\nAuto-Submitted: auto-replied'))).toEqual({ keep: false, reason: 'auto_reply' });
    expect(f.judge(mail('From: a@x.example\nAuto-Submitted: no'))).toEqual({ keep: true });
  });

  it('skips mailing lists (List-Id, Precedence bulk|list|junk)', () => {
    expect(f.judge(mail('From: a@x.example\nList-Id: <dev.lists.example>'))).toEqual({ keep: false, reason: 'mailing_list' });
    expect(f.judge(mail('From: a@x.example\nPrecedence: bulk'))).toEqual({ keep: false, reason: 'mailing_list' });
    expect(f.judge(mail('From: a@x.example\nPrecedence: first-class'))).toEqual({ keep: true });
  });

  it('is off by default: nothing is read', () => {
    const none = compileFilter(controlsOf(account({})));
    expect(none.passAll).toBe(true);
    expect(none.judge(mail('From: a@x.example\nList-Id: <l.example>\nAuto-Submitted: auto-generated'))).toEqual({ keep: true });
  });

  it('reads only a bounded head of a message for its header block', () => {
    const huge = Buffer.concat([Buffer.from('From: a@x.example\r\nX-Pad: '), Buffer.alloc(2 * 1024 * 1024, 0x61)]);
    const fields = headerFields(huge);
    expect(fields[0]?.value).toBe('a@x.example');
  });
});

describe('the header fields a verdict reads', () => {
  /** What a server answers to BODY.PEEK[HEADER.FIELDS (FILTER_HEADER_FIELDS)]: those lines only, then the blank line. */
  const fieldsOnly = (raw: Buffer): Buffer => {
    const text = raw.toString('latin1');
    const head = text.slice(0, text.indexOf('\r\n\r\n') + 2);
    const lines = head.split(/\r\n(?![ \t])/).filter((l) => FILTER_HEADER_FIELDS.includes(l.slice(0, l.indexOf(':')).toLowerCase()));
    return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  };

  it('are enough: every verdict from those fields alone equals the verdict from the whole message (IMAP fetches only them first)', () => {
    const filters = [
      compileFilter(controlsOf(account({ skip: ['auto_replies', 'mailing_lists'] }))),
      compileFilter(controlsOf(account({ participants: { deny: ['*@newsletter.example'] } })), ['me@corp.example']),
      compileFilter(controlsOf(account({ participants: { allow: ['partner.example'] } })), ['me@corp.example']),
    ];
    const messages = [
      'From: News <n@newsletter.example>\nTo: me@corp.example\nSubject: weekly',
      'From: a@x.example\nTo: me@corp.example,\n b@sub.partner.example\nSubject: folded To',
      'From: a@x.example\nCc: n@newsletter.example',
      'From: a@x.example\nAuto-Submitted: auto-replied',
      'From: a@x.example\nX-Autoreply: yes',
      'From: a@x.example\nX-Autorespond: yes',
      'From: a@x.example\nX-Auto-Response-Suppress: OOF\nIn-Reply-To: <m@x.example>',
      'From: a@x.example\nList-Id: <dev.lists.example>',
      'From: a@x.example\nPrecedence: junk',
      'From: a@x.example\nSubject: nothing to see\nReceived: from somewhere',
    ].map(mail);
    for (const f of filters) for (const m of messages) expect(f.judge(fieldsOnly(m))).toEqual(f.judge(m));
  });
});

describe('since', () => {
  it('is an ISO date, or a duration counted back from the first sync', () => {
    const first = new Date('2026-04-01T12:00:00Z');
    expect(sinceDate('2026-01-15', first).toISOString()).toBe('2026-01-15T00:00:00.000Z');
    expect(sinceDate('P90D', first).toISOString()).toBe('2026-01-01T12:00:00.000Z');
    expect(sinceDate('P1M', first).toISOString()).toBe('2026-03-01T12:00:00.000Z');
    expect(sinceDate('PT12H', first).toISOString()).toBe('2026-04-01T00:00:00.000Z');
  });

  it('refuses what is neither', () => {
    expect(() => account({ since: '90 days' })).toThrow();
    expect(account({ since: 'P2W' }).since).toBe('P2W');
  });
});
