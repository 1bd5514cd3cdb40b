import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ThreadInputs } from '../../src/cli/preview/thread-inputs.js';
import type { Comment } from '../../src/model/index.js';
import { computeThreadProperties } from '../../src/preview/threads.js';

const address = fc.constantFrom('a@x.com', 'B <b@x.com>', 'c@x.com', 'D <D@X.com>', 'e@y.org');
const comment = fc.record({
  id: fc.constantFrom('a1', 'b2', 'c3', 'd4', 'e5', 'f6', 'a7', 'b8'),
  thread: fc.option(fc.constantFrom('aa', 'bb', 'cc'), { nil: undefined }),
  t: fc.integer({ min: 0, max: 5 }).map((h) => new Date(Date.UTC(2024, 0, 1, h)).toISOString()),
  from: fc.option(address, { nil: undefined }),
  to: fc.array(address, { maxLength: 3 }),
  cc: fc.array(address, { maxLength: 2 }),
});

function toComment(c: { id: string; thread?: string; t: string; from?: string; to: string[]; cc: string[] }): Comment {
  const message: Comment['messages'][number] = { body: { text: 'x' } };
  if (c.from) message.from = c.from;
  if (c.to.length) message.to = c.to;
  if (c.cc.length) message.cc = c.cc;
  const out: Comment = { id: c.id, timestamp: c.t, messages: [message], user_properties: {} };
  if (c.thread) out.thread_id = c.thread;
  return out;
}

describe('compact thread inputs', () => {
  it('give exactly the thread properties of the full comments (property)', () => {
    fc.assert(
      fc.property(fc.array(comment, { maxLength: 25 }), (raw) => {
        const comments = raw.map(toComment);
        const inputs = new ThreadInputs();
        for (const c of comments) inputs.add(c);
        inputs.compute();
        const expected = computeThreadProperties(comments);
        for (const c of comments) expect(inputs.get(c.id)).toEqual(expected.get(c.id));
        expect(inputs.size).toBe(new Set(comments.map((c) => c.id)).size);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps the spec key order', () => {
    const inputs = new ThreadInputs();
    inputs.add(toComment({ id: 'a1', t: '2024-01-01T00:00:00.000Z', to: [], cc: [] }));
    inputs.compute();
    expect(Object.keys(inputs.get('a1')!)).toEqual([
      'thread_position',
      'num_messages',
      'num_participants',
      'first_sender',
      'duration',
      'response_time',
    ]);
  });
});
