/**
 * Mail that is mail, refused: a message with blank or whitespace-only lines before its header
 * block was skipped as "not mail" in a directory walk, and one saved as `.msg` was refused as
 * an invalid Outlook file. Both are read as mail, their bytes kept exact, with a warning.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readInput } from '../../adapters/files/read.js';
import type { FileItem } from '../../adapters/files/types.js';
import { parseMessage } from '../../src/mime/parse.js';

const LEADING = Buffer.from(' \r\n\t\n\nFrom: a@example.com\r\nSubject: exported\r\n\r\nhello\r\n', 'latin1');

async function readAll(input: string, skipped: string[] = []): Promise<FileItem[]> {
  const out: FileItem[] = [];
  for await (const item of readInput(input, { onSkip: (p) => skipped.push(p) })) out.push(item);
  return out;
}

describe('mail with leading blank lines, and RFC 5322 mail named .msg', () => {
  it('a file without extension starting with whitespace lines is read in a directory walk, bytes exact', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-leading-'));
    await writeFile(join(dir, 'exported'), LEADING);
    const skipped: string[] = [];
    const items = await readAll(dir, skipped);
    expect(skipped).toEqual([]);
    expect(items).toHaveLength(1);
    expect(items[0]!.error).toBeUndefined();
    expect(items[0]!.raw!.equals(LEADING)).toBe(true);
  });

  it('an RFC 5322 message saved as .msg (no compound-file magic) is read as mail', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-rfc822-msg-'));
    await writeFile(join(dir, 'a.msg'), LEADING);
    await writeFile(join(dir, 'b.msg'), 'Received: from x\r\nFrom: a@example.com\r\n\r\nhi\r\n');
    const items = await readAll(dir);
    expect(items.map((i) => i.error?.code ?? 'ok')).toEqual(['ok', 'ok']);
    expect(items[0]!.raw!.equals(LEADING)).toBe(true);
  });

  it('the parser skips the leading lines and says so', () => {
    const parsed = parseMessage(LEADING);
    expect(parsed.headers.map((h) => h.key)).toEqual(['from', 'subject']);
    expect(parsed.warnings.map((w) => w.code)).toContain('MAILGATE_WARN_MIME_MALFORMED');
    expect(parseMessage(Buffer.from('From: a@example.com\n\nhi\n')).warnings).toEqual([]);
  });
});
