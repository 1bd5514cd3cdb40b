/**
 * Regression: an mbox upload of millions of tiny messages blocked the loop, took gigabytes and
 * answered 500 (a stack overflow spreading the split into an array) instead of 413, because
 * `max_messages` was checked only after the whole split. Asserted on work done: messages taken
 * before the 413.
 */
import { describe, expect, it } from 'vitest';
import { UPLOAD_ERRORS } from '../../adapters/upload/errors.js';
import { messagesOf, type SplitStats } from '../../adapters/upload/messages.js';
import { isGatewayError } from '../../src/errors.js';
import { splitMbox } from '../../src/mime/mbox.js';

const MESSAGE = 'From a@example.com Mon Jan  1 00:00:00 2024\nSubject: x\n\nx\n\n';

describe('mbox of many tiny messages (split before the count)', () => {
  it('answers 413 the moment max_messages is passed, having split no further', async () => {
    const bytes = Buffer.from(MESSAGE.repeat(300_000));
    const stats: SplitStats = { messages: 0 };
    const err = await messagesOf([{ kind: 'mbox', bytes }], 40 * 1024 * 1024, 1000, stats).catch((e: unknown) => e);
    expect(isGatewayError(err, 'MAILGATE_ERR_UPLOAD_TOO_LARGE')).toBe(true);
    expect(UPLOAD_ERRORS.MAILGATE_ERR_UPLOAD_TOO_LARGE.http).toBe(413);
    expect(stats.messages).toBe(1001);
  });

  it('splits an mbox of 300,000 messages without spreading them into one call (no stack overflow)', () => {
    expect(splitMbox(Buffer.from(MESSAGE.repeat(300_000)), 'mboxrd', 1024)).toHaveLength(300_000);
  });

  it('reads a chain of messages whose Content-Length points past the next From line without recursion', () => {
    const n = 50_000;
    const one = (i: number) => `From a@example.com Mon Jan  1 00:00:00 2024\nContent-Length: ${40 + (i % 7)}\n\nx\n`;
    const bytes = Buffer.from(Array.from({ length: n }, (_, i) => one(i)).join(''));
    const messages = splitMbox(bytes, 'mboxrd', 40 * 1024 * 1024);
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.length).toBeLessThanOrEqual(n);
  });
});
