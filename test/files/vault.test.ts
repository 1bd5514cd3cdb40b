/**
 * Google Vault mail exports, zipped and unpacked: messages from the mbox files, labels and the
 * account from the `…-metadata.xml` (matched by Message-ID) into the origin, for route
 * properties (`{labels}`, `{account}`).
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readInputs, type FileItem } from '../../adapters/files/index.js';
import { resolveUserProperties } from '../../src/pipeline/origin.js';
import { writeZip } from './support/zip-writer.js';

const message = (n: number, id: string) =>
  `From alice@example.com Mon Jun 03 10:0${n}:00 2024\nFrom: alice@example.com\nTo: bob@example.com\nSubject: Vault ${n}\nDate: Mon, 03 Jun 2024 10:0${n}:00 +0000\nMessage-ID: ${id}\n\nBody ${n}\n\n`;

const MBOX = Buffer.from(message(1, '<v1@example.com>') + message(2, '<v2@example.com>') + message(3, '<not-in-xml@example.com>'));

const tag = (name: string, value: string) => `<Tag TagName="${name}" TagDataType="Text" TagValue="${value}"/>`;
const doc = (id: string, labels: string, account: string) =>
  `<Document DocID="${id}"><Tags>${tag('Rfc822MessageId', id)}${tag('Labels', labels)}${tag('Account', account)}${tag('#Subject', 'x')}</Tags></Document>`;
const XML = Buffer.from(
  `<?xml version="1.0" encoding="UTF-8"?><Root DataInterchangeType="Update" Description="Vault export"><Batch name="support-export"><Documents>` +
    doc('&lt;v1@example.com&gt;', '^INBOX,Support/Billing', 'support@example.com') +
    doc('<v2@example.com>'.replace(/</g, '&lt;').replace(/>/g, '&gt;'), '^SENT', 'support@example.com') +
    `</Documents></Batch></Root>`,
);

async function collect(path: string): Promise<FileItem[]> {
  const out: FileItem[] = [];
  for await (const item of readInputs([path])) out.push(item);
  return out;
}

function check(items: FileItem[]): void {
  expect(items.filter((i) => i.error)).toEqual([]);
  expect(items.map((i) => i.raw!.toString().match(/Subject: (.*)/)![1])).toEqual(['Vault 1', 'Vault 2', 'Vault 3']);
  expect(items.map((i) => i.origin.details['labels'])).toEqual([['^INBOX', 'Support/Billing'], ['^SENT'], undefined]);
  expect(items[0]!.origin.details['account']).toBe('support@example.com');
  expect(items[2]!.origin.details['account']).toBeUndefined();
  expect(resolveUserProperties({ 'string:Labels': '{labels}', 'string:Account': '{account}' }, items[0]!.origin)).toEqual({
    'string:Labels': '^INBOX,Support/Billing',
    'string:Account': 'support@example.com',
  });
  expect(new Set(items.map((i) => i.origin.details['index'])).size).toBe(3);
}

describe('Google Vault exports', () => {
  it('reads a zipped export: mbox messages with labels and account from the metadata XML', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-vault-'));
    const zip = join(dir, 'export-1.zip');
    await writeFile(
      zip,
      writeZip([
        { name: 'support-export-metadata.xml', data: XML },
        { name: 'support-export-1.mbox', data: MBOX },
      ]),
    );
    check(await collect(zip));
  });

  it('reads the unpacked folder of an export the same way', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'mailgate-vault-')), 'export');
    await mkdir(dir);
    await writeFile(join(dir, 'support-export-metadata.xml'), XML);
    await writeFile(join(dir, 'support-export-1.mbox'), MBOX);
    check(await collect(dir));
  });

  it('skips a zip that is no Vault export as an archive', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-vault-'));
    await writeFile(join(dir, 'other.zip'), writeZip([{ name: 'notes.txt', data: Buffer.from('hello') }]));
    const skipped: string[] = [];
    const items: FileItem[] = [];
    for await (const i of readInputs([dir], { onSkip: (_p, why) => skipped.push(why) })) items.push(i);
    expect(items).toEqual([]);
    expect(skipped).toEqual(['archive']);
  });
});
