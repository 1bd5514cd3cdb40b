import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readMbox } from '../../adapters/files/mbox.js';
import { isSeparatorLine } from '../../src/mime/mbox-split.js';
import { unquote } from '../../src/mime/mbox-finish.js';
import type { FileItem, ReadOptions } from '../../adapters/files/types.js';
import { sample } from './support/paths.js';

async function collect(file: string, options: ReadOptions & { resume?: { index: number; offset?: number } } = {}): Promise<FileItem[]> {
  const out: FileItem[] = [];
  for await (const item of readMbox(file, options)) out.push(item);
  return out;
}

const text = (item: FileItem | undefined) => item?.raw?.toString('utf8') ?? '';

async function tempFile(content: string | Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mailgate-mbox-'));
  const file = join(dir, 'test.mbox');
  await writeFile(file, content);
  return file;
}

describe('From_ separator lines', () => {
  it('takes the first line always, a dated line after an empty line, and a fully dated line anywhere', () => {
    expect(isSeparatorLine('From x', true, true)).toBe(true);
    expect(isSeparatorLine('From alice@example.com Mon Mar  4 09:00:00 2024', false, true)).toBe(true);
    expect(isSeparatorLine('From alice@example.com Mon Mar  4 09:00:00 2024', false, false)).toBe(true);
    expect(isSeparatorLine('From - Sat Jan 03 2004', false, true)).toBe(true);
    expect(isSeparatorLine('From then on the numbers were fine', false, true)).toBe(false);
    expect(isSeparatorLine('From 2019 on we grew', false, false)).toBe(false);
    expect(isSeparatorLine('>From alice@example.com Mon Mar  4 09:00:00 2024', false, true)).toBe(false);
  });
});

describe('mboxrd (the default)', () => {
  it('splits the sample into its three messages and unquotes >+From lines by one level', async () => {
    const items = await collect(sample('mbox/mboxrd.mbox'));
    expect(items.map((i) => i.origin.details['index'])).toEqual([0, 1, 2]);
    expect(items.every((i) => i.error === undefined)).toBe(true);
    expect(text(items[0])).toContain('\nFrom the start of the quarter we grew.\n>From here it only looks better.\n');
    expect(text(items[0]).startsWith('From: Alice Example')).toBe(true);
    expect(text(items[0]).endsWith('Alice\n')).toBe(true);
    expect(text(items[1])).toContain('\nFrom then on the numbers were fine');
  });

  it('mboxo unquotes only single-quoted lines; none keeps the bytes', async () => {
    const mboxo = await collect(sample('mbox/mboxrd.mbox'), { mboxQuoting: 'mboxo' });
    expect(text(mboxo[0])).toContain('\nFrom the start of the quarter we grew.\n>>From here it only looks better.\n');
    const none = await collect(sample('mbox/mboxrd.mbox'), { mboxQuoting: 'none' });
    expect(text(none[0])).toContain('\n>From the start of the quarter we grew.\n>>From here');
  });

  it('gives each item its offset and the position of the next one', async () => {
    const items = await collect(sample('mbox/mboxrd.mbox'));
    expect(items[0]!.offset).toBe(0);
    expect(items[1]!.offset).toBe(items[0]!.next.offset);
    expect(items[2]!.next).toEqual({ index: 3, offset: (await import('node:fs')).statSync(sample('mbox/mboxrd.mbox')).size });
  });

  it('reads the same messages whatever the chunk size', async () => {
    const whole = (await collect(sample('mbox/mboxrd.mbox'))).map(text);
    for (const chunkBytes of [1, 2, 3, 5, 7, 13, 64]) {
      expect((await collect(sample('mbox/mboxrd.mbox'), { chunkBytes })).map(text)).toEqual(whole);
    }
  });
});

describe('CRLF mbox', () => {
  it('splits, strips the CRLF separator line and unquotes', async () => {
    const items = await collect(sample('mbox/crlf.mbox'));
    expect(items).toHaveLength(2);
    expect(text(items[0]).endsWith('First CRLF message.\r\nFrom a quoted line.\r\n')).toBe(true);
    expect(text(items[1]).endsWith('Second CRLF message.\r\n')).toBe(true);
    for (const chunkBytes of [1, 4, 9])
      expect((await collect(sample('mbox/crlf.mbox'), { chunkBytes })).map(text)).toEqual(items.map(text));
  });
});

describe('Content-Length (mboxcl2)', () => {
  it('trusts a consistent Content-Length over a From_ line inside the body, and ignores a wrong one', async () => {
    const items = await collect(sample('mbox/content-length.mbox'));
    expect(items.map((i) => /Subject: (.*)/.exec(text(i))?.[1])).toEqual([
      'Content-Length body',
      'After Content-Length',
      'Wrong Content-Length',
      'Last one',
    ]);
    expect(text(items[0])).toContain('\nFrom alice@example.com Thu May  2 10:00:00 2024\nThis line looks like a separator');
    expect(text(items[0]).endsWith('says it is body.\n')).toBe(true);
    expect(text(items[2]).endsWith('The length header lies.\n')).toBe(true);
    for (const chunkBytes of [1, 3, 17])
      expect((await collect(sample('mbox/content-length.mbox'), { chunkBytes })).map(text)).toEqual(items.map(text));
  });

  it('takes a Content-Length body verbatim (no unquoting)', async () => {
    const body = '>From kept as is\n';
    const file = await tempFile(`From a@example.com Mon Mar  4 09:00:00 2024\nSubject: x\nContent-Length: ${body.length}\n\n${body}\n`);
    const [item] = await collect(file);
    expect(text(item)).toBe(`Subject: x\nContent-Length: ${body.length}\n\n${body}`);
  });
});

describe('byte order mark', () => {
  it('reads the first message of an mbox that starts with a UTF-8 BOM', async () => {
    const file = await tempFile(
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(
          'From a@example.com Mon Mar  4 09:00:00 2024\nSubject: one\n\n1\n\nFrom b@example.com Mon Mar  4 09:00:00 2024\nSubject: two\n\n2\n',
        ),
      ]),
    );
    expect((await collect(file)).map(text)).toEqual(['Subject: one\n\n1\n', 'Subject: two\n\n2\n']);
  });
});

describe('size budget', () => {
  it('reports an oversized message as an error item and goes on with the next', async () => {
    const big = 'x'.repeat(5000);
    const file = await tempFile(
      `From a@example.com Mon Mar  4 09:00:00 2024\nSubject: small\n\nok\n\nFrom b@example.com Mon Mar  4 09:00:00 2024\nSubject: big\n\n${big}\n\nFrom c@example.com Mon Mar  4 09:00:00 2024\nSubject: after\n\nok\n`,
    );
    const items = await collect(file, { maxMessageBytes: 1000, chunkBytes: 256 });
    expect(items.map((i) => i.error?.code ?? 'ok')).toEqual(['ok', 'MAILGATE_ERR_MIME_TOO_LARGE', 'ok']);
    expect(items[1]!.origin.details['index']).toBe(1);
    expect(text(items[2])).toBe('Subject: after\n\nok\n');
  });
});

describe('resume', () => {
  it('continues at a checkpoint offset with the same indexes and bytes', async () => {
    const file = sample('mbox/content-length.mbox');
    const all = await collect(file);
    const resumed = await collect(file, { resume: all[1]!.next });
    expect(resumed.map((i) => i.origin.details['index'])).toEqual([2, 3]);
    expect(resumed.map(text)).toEqual(all.slice(2).map(text));
    expect(resumed.map((i) => i.offset)).toEqual(all.slice(2).map((i) => i.offset));
  });

  it('falls back to counting messages when the offset no longer points at a From_ line', async () => {
    const file = sample('mbox/mboxrd.mbox');
    const all = await collect(file);
    const resumed = await collect(file, { resume: { index: 2, offset: all[2]!.offset + 3 } });
    expect(resumed.map((i) => i.origin.details['index'])).toEqual([2]);
    expect(resumed.map(text)).toEqual([text(all[2])]);
  });
});

describe('mboxrd round trip (property)', () => {
  const line = fc.oneof(
    fc.constantFrom('From here', '>From there', '>>From everywhere', 'From a@b Mon Mar  4 09:00:00 2024', '', 'plain text', '>quoted'),
    fc.string({ maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, '')),
  );
  const message = fc.array(line, { maxLength: 8 }).map((body) => `Subject: t\n\n${body.join('\n')}\n`);

  it('reads back exactly what an mboxrd writer wrote, at any chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 40 }), async (messages, chunkBytes) => {
        const quoted = messages.map((m) => m.replace(/^(>*From )/gm, '>$1'));
        const file = await tempFile(quoted.map((m) => `From sender@example.com Mon Mar  4 09:00:00 2024\n${m}\n`).join(''));
        const items = await collect(file, { chunkBytes });
        expect(items.map(text)).toEqual(messages);
      }),
      { numRuns: 60 },
    );
  });
});

describe('unquote', () => {
  it('touches only whole lines', () => {
    expect(unquote(Buffer.from('a >From b\n>From c\n'), 'mboxrd').toString()).toBe('a >From b\nFrom c\n');
  });
});
