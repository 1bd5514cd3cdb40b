/**
 * Every message of samples/mime previews into a schema-valid comment, equal to the one kept
 * in test/preview/expected/<name>.comment.json. After an intended change, rewrite those with
 * `MAILGATE_UPDATE_EXPECTED=1 npx vitest run test/preview/samples.test.ts` and review the diff.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { Comment as CommentSchema, RawEmailDocument as DocumentSchema } from '../../src/model/index.js';
import { previewSync } from '../../src/preview/index.js';

const root = join(import.meta.dirname, '..', '..');
const mimeDir = join(root, 'samples', 'mime');
const expectedDir = join(import.meta.dirname, 'expected');
const update = process.env.MAILGATE_UPDATE_EXPECTED === '1';
const files = readdirSync(mimeDir)
  .filter((f) => f.endsWith('.eml'))
  .sort();
/** Fallback time for samples without a usable Date or Received header, so the expected files are stable. */
const receivedAt = new Date('2024-01-01T00:00:00Z');

describe('preview of samples/mime', () => {
  it('has samples to preview', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  for (const f of files) {
    it(f, () => {
      const raw = readFileSync(join(mimeDir, f));
      let got: unknown;
      try {
        const r = previewSync(raw, { receivedAt });
        const c = CommentSchema.safeParse(r.comment);
        expect(c.success, c.success ? '' : JSON.stringify(c.error.issues)).toBe(true);
        expect(DocumentSchema.safeParse(r.document).success).toBe(true);
        expect(r.comment.id).toBe(r.document.comment_id);
        got = { comment: r.comment, warnings: r.warnings.map((w) => w.code) };
      } catch (err) {
        if (!isGatewayError(err)) throw err;
        got = { error: err.code };
      }
      const file = join(expectedDir, f.replace(/\.eml$/, '.comment.json'));
      if (update) {
        mkdirSync(expectedDir, { recursive: true });
        writeFileSync(file, `${JSON.stringify(got, null, 2)}\n`);
      }
      expect(existsSync(file), `${file} is missing: run with MAILGATE_UPDATE_EXPECTED=1 and review it`).toBe(true);
      expect(got).toEqual(JSON.parse(readFileSync(file, 'utf8')));
    });
  }
});
