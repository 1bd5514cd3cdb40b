import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseHeaderBlock } from '../../src/mime/headers.js';
import { Comment as CommentSchema, ThreadProperties as ThreadPropertiesSchema, type Comment } from '../../src/model/index.js';
import { computeThreadProperties, messageAddresses, threadIdFor } from '../../src/preview/threads.js';

const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
const h = (block: string) => parseHeaderBlock(block);

describe('threadIdFor', () => {
  it('uses the first id of References', () => {
    expect(threadIdFor(h('References: <root@x> <mid@x>\nIn-Reply-To: <mid@x>\nMessage-ID: <me@x>'))).toBe(hex('root@x'));
  });

  it('falls back to In-Reply-To, then the own Message-ID', () => {
    expect(threadIdFor(h('In-Reply-To: <parent@x>\nMessage-ID: <me@x>'))).toBe(hex('parent@x'));
    expect(threadIdFor(h('Message-ID: <me@x>'))).toBe(hex('me@x'));
  });

  it('gives a root and its replies the same thread id', () => {
    const root = threadIdFor(h('Message-ID: <root@example.com>'));
    const reply = threadIdFor(h('Message-ID: <r1@example.com>\nIn-Reply-To: <root@example.com>'));
    const reply2 = threadIdFor(h('Message-ID: <r2@example.com>\nReferences: <root@example.com>\n <r1@example.com>'));
    expect(new Set([root, reply, reply2]).size).toBe(1);
  });

  it("uses the conversation part of a reply's Thread-Index when References and In-Reply-To are missing", () => {
    const root = Buffer.alloc(22, 7);
    const reply = Buffer.concat([root, Buffer.alloc(5, 1)]);
    expect(threadIdFor(h(`Thread-Index: ${reply.toString('base64')}\nMessage-ID: <me@x>`))).toBe(root.toString('hex'));
  });

  it("uses the own Message-ID for a conversation root's Thread-Index (22 bytes), so replies join it", () => {
    const root = Buffer.alloc(22, 7).toString('base64');
    expect(threadIdFor(h(`Thread-Index: ${root}\nMessage-ID: <root@x>`))).toBe(hex('root@x'));
  });

  it('falls back to the comment id itself (no-message-id thread id was hex of hex regression), then to a hash of the header block; never empty', () => {
    expect(threadIdFor(h('Subject: hi'), 'abc')).toBe('abc');
    const hash = 'f0'.repeat(32);
    expect(threadIdFor(h('Subject: hi'), hash)).toBe(hash);
    const id = threadIdFor(h('Subject: hi'));
    expect(id).toMatch(/^[0-9a-f]{64}$/);
  });

  it('hashes a root id whose hex would exceed 1024 characters', () => {
    const long = `${'a'.repeat(600)}@x`;
    expect(threadIdFor(h(`Message-ID: <${long}>`))).toBe(createHash('sha256').update(long).digest('hex'));
  });
});

function comment(
  id: string,
  timestamp: string,
  from: string | undefined,
  extra: Partial<Comment['messages'][0]> = {},
  thread = 'aa',
): Comment {
  const message: Comment['messages'][0] = { body: { text: 'x' }, ...extra };
  if (from !== undefined) message.from = from;
  return { id, timestamp, messages: [message], user_properties: {}, thread_id: thread };
}

describe('computeThreadProperties', () => {
  it('orders by timestamp from 0 and shares everything else', () => {
    const comments = [
      comment('03', '2024-03-05T12:00:00Z', 'Bob <BOB@example.com>', { to: ['ann@example.com'] }),
      comment('01', '2024-03-05T10:00:00Z', 'Ann <ann@example.com>', { to: ['Bob <bob@example.com>'], cc: ['carl@example.com'] }),
      comment('02', '2024-03-05T11:00:00Z', 'ann@example.com', { to: ['bob@example.com'], bcc: ['dora@example.com'] }),
    ];
    for (const c of comments) expect(CommentSchema.safeParse(c).success).toBe(true);
    const props = computeThreadProperties(comments);
    const shared = { num_messages: 3, num_participants: 4, first_sender: 'ann@example.com', duration: 7200, response_time: 7200 };
    expect(props.get('01')).toEqual({ thread_position: 0, ...shared });
    expect(props.get('02')).toEqual({ thread_position: 1, ...shared });
    expect(props.get('03')).toEqual({ thread_position: 2, ...shared });
    for (const p of props.values()) expect(ThreadPropertiesSchema.safeParse(p).success).toBe(true);
  });

  it('breaks timestamp ties by comment id', () => {
    const props = computeThreadProperties([comment('bb', '2024-03-05T10:00:00Z', 'a@x'), comment('aa', '2024-03-05T10:00:00Z', 'b@x')]);
    expect(props.get('aa')?.thread_position).toBe(0);
    expect(props.get('bb')?.thread_position).toBe(1);
    expect(props.get('aa')?.first_sender).toBe('b@x');
    expect(props.get('aa')?.duration).toBe(0);
    expect(props.get('aa')?.response_time).toBe(0);
  });

  it('gives a one-message thread null duration and null response_time', () => {
    const props = computeThreadProperties([comment('01', '2024-03-05T10:00:00Z', 'a@x', { to: ['b@x', 'B@X'] })]);
    expect(props.get('01')).toEqual({
      thread_position: 0,
      num_messages: 1,
      num_participants: 2,
      first_sender: 'a@x',
      duration: null,
      response_time: null,
    });
  });

  it('gives null response_time when only the first sender wrote', () => {
    const props = computeThreadProperties([comment('01', '2024-03-05T10:00:00Z', 'a@x'), comment('02', '2024-03-05T10:30:00Z', 'A <A@X>')]);
    expect(props.get('02')).toMatchObject({ num_messages: 2, duration: 1800, response_time: null });
  });

  it('measures response_time to the oldest comment by another sender', () => {
    const props = computeThreadProperties([
      comment('01', '2024-03-05T10:00:00Z', 'a@x'),
      comment('02', '2024-03-05T10:10:00Z', 'a@x'),
      comment('03', '2024-03-05T10:20:00Z', 'b@x'),
      comment('04', '2024-03-05T10:30:00Z', 'c@x'),
    ]);
    expect(props.get('01')?.response_time).toBe(1200);
  });

  it('keeps threads apart, treats comments without thread_id as one-comment threads, and counts a repeated id once', () => {
    const lone: Comment = { id: 'ff', timestamp: '2024-01-01T00:00:00Z', messages: [{ body: { text: 'x' } }], user_properties: {} };
    const props = computeThreadProperties([
      comment('01', '2024-03-05T10:00:00Z', 'a@x', {}, 't1'),
      comment('02', '2024-03-05T10:00:00Z', 'b@x', {}, 't2'),
      comment('02', '2024-03-05T11:00:00Z', 'b@x', {}, 't2'),
      lone,
    ]);
    expect(props.get('01')?.num_messages).toBe(1);
    expect(props.get('02')?.num_messages).toBe(1);
    expect(props.get('ff')).toEqual({
      thread_position: 0,
      num_messages: 1,
      num_participants: 0,
      first_sender: null,
      duration: null,
      response_time: null,
    });
  });

  it('gives first_sender null when the first comment has no sender, and then any sender responds', () => {
    const props = computeThreadProperties([comment('01', '2024-03-05T10:00:00Z', undefined), comment('02', '2024-03-05T10:05:00Z', 'b@x')]);
    expect(props.get('01')).toMatchObject({ first_sender: null, response_time: 300 });
  });
});

describe("messageAddresses (a thread index entry's participants)", () => {
  it('lists the lowercased addresses of sender and recipients once each, in order', () => {
    const m = {
      body: { text: '' },
      from: 'Ann <Ann@Example.com>',
      to: ['bob@example.com', 'ANN@example.com'],
      cc: ['Cy <cy@example.com>'],
      bcc: ['  '],
    };
    expect(messageAddresses(m)).toEqual(['ann@example.com', 'bob@example.com', 'cy@example.com']);
    expect(messageAddresses(undefined)).toEqual([]);
  });
});
