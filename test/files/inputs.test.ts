import { readFileSync } from 'node:fs';
import { appendFile, cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readInput, readInputs } from '../../adapters/files/index.js';
import type { FileItem, ReadOptions } from '../../adapters/files/index.js';
import { readBack } from './support/mail.js';
import { MSG_SAMPLES } from './support/msg-samples.js';
import { writeMsg } from './support/msg-writer.js';
import { SAMPLES, sample } from './support/paths.js';

async function collect(paths: string[], options: ReadOptions = {}): Promise<FileItem[]> {
  const out: FileItem[] = [];
  for await (const item of readInputs(paths, options)) out.push(item);
  return out;
}

const rel = (item: FileItem) => `${relative(SAMPLES, item.origin.details['path'])}#${item.origin.details['index']}`;

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'mailgate-files-'));
}

describe('directories', () => {
  it('walks sorted, skips hidden files and reports files that are not mail as skipped', async () => {
    const skipped: string[] = [];
    const items = await collect([sample('eml')], { onSkip: (p) => skipped.push(relative(SAMPLES, p)) });
    expect(items.map(rel)).toEqual(['eml/01-hello.eml#0', 'eml/02-reply-to-report.eml#0', 'eml/03-no-extension#0']);
    expect(skipped).toEqual(['eml/notes.txt']);
  });

  it('refuses a file named explicitly that is not mail, and a missing path, as error items', async () => {
    const items = await collect([sample('bad/not-mail.txt'), sample('does-not-exist')]);
    expect(items.map((i) => i.error?.code)).toEqual(['MAILGATE_ERR_INPUT_UNSUPPORTED', 'MAILGATE_ERR_INPUT_NOT_FOUND']);
  });

  it('reads a whole tree deterministically', async () => {
    const a = (await collect([SAMPLES])).map(rel);
    const b = (await collect([SAMPLES])).map(rel);
    expect(a).toEqual(b);
    expect(a.length).toBeGreaterThan(10);
  });
});

describe('maildir', () => {
  it('reads cur and new, skips tmp and root files, and reads Maildir++ subfolders', async () => {
    const items = await collect([sample('maildir')]);
    expect(items.map(rel)).toEqual([
      'maildir/.Sent/cur/1714723200.M4P4.host:2,S#0',
      'maildir/cur/1714550400.M1P1.host:2,S#0',
      'maildir/new/1714636800.M2P2.host#0',
    ]);
    expect(items.every((i) => i.raw !== undefined)).toBe(true);
  });
});

describe('single files', () => {
  it('reports a message over the size budget without reading it', async () => {
    const [item] = await collect([sample('eml/01-hello.eml')], { maxMessageBytes: 10 });
    expect(item!.error?.code).toBe('MAILGATE_ERR_MIME_TOO_LARGE');
  });

  it('treats an empty .eml as an (empty) message for the parser to judge', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'empty.eml'), '');
    const [item] = await collect([join(dir, 'empty.eml')]);
    expect(item!.raw?.length).toBe(0);
  });
});

describe('Outlook .msg', () => {
  it('has committed samples that the test writer reproduces byte for byte', () => {
    for (const [name, spec] of Object.entries(MSG_SAMPLES)) expect(writeMsg(spec).equals(readFileSync(sample(`msg/${name}`)))).toBe(true);
  });

  it('rebuilds a message from the properties: addresses, subject, date, id, both bodies and attachments', async () => {
    const [item] = await collect([sample('msg/properties.msg')]);
    expect(item!.error).toBeUndefined();
    const mail = await readBack(item!.raw!);
    expect(mail.from).toEqual({ name: 'Kim Example', address: 'kim@example.com' });
    expect(mail.subject).toBe('Réunion budget 2024');
    expect(mail.messageId).toBe('<msg-properties-1@example.com>');
    expect(new Date(mail.date!).toISOString()).toBe('2024-06-03T14:05:00.000Z');
    expect(mail.to).toEqual(['lee@example.com', 'max@example.com']);
    expect(mail.cc).toEqual(['nia@example.com']);
    expect(mail.text).toContain('the budget meeting moves to Thursday.');
    expect(mail.html).toContain('<p>the budget meeting moves to Thursday.</p>');
    expect(mail.attachments.map((a) => [a.filename, a.mimeType, a.size])).toEqual([
      ['agenda.txt', 'text/plain', 20],
      ['pixel.png', 'image/png', 66],
    ]);
  });

  it('keeps the transport headers (less the MIME structure fields) when the file has them', async () => {
    const [item] = await collect([sample('msg/transport-headers.msg')]);
    const raw = item!.raw!.toString();
    const header = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(header).toContain('Received: from mx.example.com');
    expect(header).toContain('In-Reply-To: <lunch-1@example.com>');
    expect(header).not.toContain('old-boundary');
    expect((await readBack(item!.raw!)).text).toBe('Friday works for me.\r\n');
  });

  it('lists an attached Outlook item as one attachment of the message, never as a message of its own', async () => {
    const dir = await tempDir();
    const file = join(dir, 'forward.msg');
    const inner = { subject: 'Original question', senderEmail: 'customer@example.com', body: 'Where is my order?' };
    await writeFile(
      file,
      writeMsg({
        subject: 'FW: Original question',
        senderEmail: 'agent@example.com',
        body: 'See the attached mail.',
        attachments: [{ fileName: 'Original question.msg', content: new Uint8Array(), message: inner }],
      }),
    );
    const items = await collect([file]);
    expect(items).toHaveLength(1);
    const mail = await readBack(items[0]!.raw!);
    expect(mail.subject).toBe('FW: Original question');
    expect(mail.text).toContain('See the attached mail.');
    expect(mail.text).not.toContain('Where is my order?');
    expect(mail.attachments.map((a) => [a.filename, a.mimeType])).toEqual([['Original question.msg', 'application/vnd.ms-outlook']]);
    expect(mail.attachments[0]!.size).toBeGreaterThan(0);
  });

  it('handles bcc, HTML-only bodies, inline attachments and non-ASCII names', async () => {
    const dir = await tempDir();
    const file = join(dir, 'x.msg');
    await writeFile(
      file,
      writeMsg({
        subject: 'Grüße',
        senderName: 'Zoë Example',
        senderEmail: 'zoe@example.com',
        bodyHtml: '<p>Nur HTML</p>',
        recipients: [{ type: 'bcc', email: 'hidden@example.com' }],
        attachments: [{ fileName: 'Übersicht.pdf', mimeType: 'application/pdf', content: Buffer.alloc(3000, 1), contentId: 'img1@x' }],
      }),
    );
    const [item] = await collect([file]);
    const mail = await readBack(item!.raw!);
    expect(mail.from).toEqual({ name: 'Zoë Example', address: 'zoe@example.com' });
    expect(mail.subject).toBe('Grüße');
    expect(mail.bcc).toEqual(['hidden@example.com']);
    expect(mail.html).toContain('Nur HTML');
    expect(mail.attachments.map((a) => [a.filename, a.size, a.contentId])).toEqual([['Übersicht.pdf', 3000, '<img1@x>']]);
  });

  it('gives MAILGATE_ERR_INPUT_MSG_INVALID for a corrupt or truncated file', async () => {
    const items = await collect([sample('bad/corrupt.msg'), sample('bad/truncated.msg')]);
    expect(items.map((i) => i.error?.code)).toEqual(['MAILGATE_ERR_INPUT_MSG_INVALID', 'MAILGATE_ERR_INPUT_MSG_INVALID']);
  });
});

describe('resume across inputs', () => {
  it('skips inputs before the resume point, walks its directory again and continues inside the resume file', async () => {
    const dir = await tempDir();
    await cp(SAMPLES, dir, { recursive: true });
    const inputs = [join(dir, 'eml'), join(dir, 'mbox'), join(dir, 'maildir')];
    const all = await collect(inputs);
    const at = all.findIndex((i) => i.origin.details['path'].endsWith('mboxrd.mbox') && i.origin.details['index'] === 1);
    const point = { path: all[at]!.origin.details['path'], ...all[at]!.next };
    const resumed = await collect(inputs, { resumeFrom: point });
    const key = (i: FileItem) => `${relative(dir, i.origin.details['path'])}#${i.origin.details['index']}`;
    const expected = all.filter(
      (i) =>
        !i.origin.details['path'].startsWith(join(dir, 'eml')) &&
        !(i.origin.details['path'] === point.path && i.origin.details['index'] <= 1),
    );
    expect(resumed.map(key)).toEqual(expected.map(key));
    expect(resumed.some((i) => i.origin.details['path'] === point.path && i.origin.details['index'] === 2)).toBe(true);
  });

  it('reads nothing from an mbox whose checkpoint is its end, and reads on when it grew', async () => {
    const dir = await tempDir();
    const file = join(dir, 'grow.mbox');
    const msg = (n: number) => `From a@example.com Mon Jan  1 00:00:00 2024\nFrom: a@example.com\nSubject: ${n}\n\nbody ${n}\n\n`;
    await writeFile(file, msg(1) + msg(2));
    const first = await collect([file]);
    expect(first).toHaveLength(2);
    const end = first[1]!.next;
    expect(await collect([file], { resumeFrom: { path: file, ...end } })).toEqual([]);
    await appendFile(file, msg(3));
    const grown = await collect([file], { resumeFrom: { path: file, ...end } });
    expect(grown.map((i) => i.origin.details['index'])).toEqual([2]);
  });

  it('reads nothing more from a single-message file already done', async () => {
    const file = sample('eml/01-hello.eml');
    const items: FileItem[] = [];
    for await (const i of readInput(file, { resumeFrom: { path: file, index: 1 } })) items.push(i);
    expect(items).toEqual([]);
  });
});
