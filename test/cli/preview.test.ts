import { mkdir, mkdtemp, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitAtPosition } from '../../src/cli/preview/spool.js';
import { Comment, RawEmailDocument, ThreadProperties } from '../../src/model/index.js';
import type { Comment as CommentType } from '../../src/model/index.js';
import { runMailgate } from './support/dist.js';

interface Line {
  origin: { path: string; index: number };
  document?: unknown;
  comment?: { id: string; messages: Array<{ subject?: { text: string } }>; user_properties: Record<string, string | number> };
  thread_properties?: { thread_position: number; num_messages: number };
  warnings?: Array<{ code: string; message: string }>;
  error?: { code: string; message: string };
}

const parseLines = (stdout: string): Line[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
const bySubject = (lines: Line[], subject: string) => lines.filter((l) => l.comment?.messages[0]?.subject?.text === subject);

describe('mailgate preview (jsonl)', () => {
  it('prints one valid object per message, keys in order, and exits 0 when all parsed', async () => {
    const run = await runMailgate([
      'preview',
      'samples/files/mbox',
      'samples/files/eml',
      'samples/files/maildir',
      'samples/files/msg',
      '--workers',
      '2',
    ]);
    expect(run.code).toBe(0);
    const lines = parseLines(run.stdout);
    expect(lines).toHaveLength(19);
    for (const line of lines) {
      expect(Object.keys(line)).toEqual(['origin', 'document', 'comment', 'thread_properties', 'warnings']);
      expect(RawEmailDocument.safeParse(line.document).success).toBe(true);
      expect(Comment.safeParse(line.comment).success).toBe(true);
      expect(ThreadProperties.safeParse(line.thread_properties).success).toBe(true);
      expect(Object.keys(line.origin)).toEqual(['path', 'index']);
    }
    expect(lines[0]!.origin).toEqual({ path: 'samples/files/mbox/content-length.mbox', index: 0 });
    expect(run.stderr).toContain('skipped samples/files/eml/notes.txt');
  });

  it('computes thread properties across all files of the run', async () => {
    const run = await runMailgate([
      'preview',
      'samples/files/eml',
      'samples/files/mbox/mboxrd.mbox',
      'samples/files/msg/transport-headers.msg',
    ]);
    const lines = parseLines(run.stdout);
    const report = bySubject(lines, 'Quarterly report')[0]!;
    const replies = bySubject(lines, 'Re: Quarterly report');
    expect(report.thread_properties).toMatchObject({ thread_position: 0, num_messages: 3 });
    expect(replies.map((l) => l.thread_properties?.thread_position).sort()).toEqual([1, 2]);
    expect(bySubject(lines, 'Re: Lunch?')[0]!.thread_properties).toMatchObject({ thread_position: 1, num_messages: 2 });
  });

  it('sets number:Position in Thread to the thread position computed across the run (position-always-0 regression)', async () => {
    const run = await runMailgate(['preview', 'samples/files/eml', 'samples/files/mbox/mboxrd.mbox', '--workers', '1']);
    const lines = parseLines(run.stdout).filter((l) => l.comment !== undefined);
    for (const l of lines) expect(l.comment!.user_properties['number:Position in Thread']).toBe(l.thread_properties!.thread_position);
    const reply = lines.find((l) => l.origin.path === 'samples/files/eml/02-reply-to-report.eml')!;
    expect(reply.thread_properties!.thread_position).toBe(2);
    expect(reply.comment!.user_properties['number:Position in Thread']).toBe(2);
    expect(Comment.safeParse(reply.comment).success).toBe(true);
  });

  it('dates a message with neither Date nor Received by its container, never by the clock (timestamp-is-now regression)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-cli-'));
    const undated = (id: string) => `From: a@example.com\nSubject: ${id}\nMessage-ID: <${id}@x>\n\nhello\n`;
    await writeFile(
      join(dir, 'a.mbox'),
      `From sender@example.com Tue Mar  5 10:15:00 2024\n${undated('mbox')}\nFrom sender@example.com Wed Mar  6 11:00:00 2024\n${undated('mbox2')}`,
    );
    await mkdir(join(dir, 'md', 'cur'), { recursive: true });
    await mkdir(join(dir, 'md', 'new'));
    await writeFile(join(dir, 'md', 'cur', '1714550400.M1P1.host:2,S'), undated('maildir'));
    await writeFile(join(dir, 'b.eml'), undated('eml'));
    await utimes(join(dir, 'b.eml'), new Date('2023-02-01T08:00:00Z'), new Date('2023-02-01T08:00:00Z'));
    await writeFile(join(dir, 'c.eml'), `Received: from x by y; Thu, 07 Mar 2024 09:00:00 +0000\n${undated('received')}`);
    const run = await runMailgate(['preview', dir]);
    const at = (subject: string) => (bySubject(parseLines(run.stdout), subject)[0]!.comment as unknown as { timestamp: string }).timestamp;
    expect(at('mbox')).toBe('2024-03-05T10:15:00.000Z');
    expect(at('mbox2')).toBe('2024-03-06T11:00:00.000Z');
    expect(at('maildir')).toBe('2024-05-01T08:00:00.000Z');
    expect(at('eml')).toBe('2023-02-01T08:00:00.000Z');
    expect(at('received')).toBe('2024-03-07T09:00:00.000Z');
  });

  it('prints an error line per failed item, never crashes, and exits 1', async () => {
    const run = await runMailgate(['preview', 'samples/files/bad', 'samples/files/eml/01-hello.eml', 'samples/files/missing.eml']);
    expect(run.code).toBe(1);
    const lines = parseLines(run.stdout);
    expect(lines.map((l) => l.error?.code ?? 'ok')).toEqual([
      'MAILGATE_ERR_INPUT_MSG_INVALID',
      'MAILGATE_ERR_INPUT_MSG_INVALID',
      'ok',
      'MAILGATE_ERR_INPUT_NOT_FOUND',
    ]);
    expect(Object.keys(lines[0]!)).toEqual(['origin', 'error']);
    expect(lines[3]!.origin).toEqual({ path: 'samples/files/missing.eml', index: 0 });
  });

  it('reports parser failures and size budget failures per message', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-cli-'));
    await writeFile(join(dir, 'a-empty.eml'), '');
    await writeFile(join(dir, 'b-ok.eml'), 'From: a@example.com\nSubject: ok\n\nhello\n');
    const run = await runMailgate(['preview', dir]);
    expect(parseLines(run.stdout).map((l) => l.error?.code ?? 'ok')).toEqual(['MAILGATE_ERR_MIME_EMPTY', 'ok']);
    expect(run.code).toBe(1);
    const small = await runMailgate(['preview', 'samples/files/mbox/mboxrd.mbox', '--max-message-bytes', '250']);
    expect(parseLines(small.stdout).map((l) => l.error?.code ?? 'ok')).toEqual([
      'MAILGATE_ERR_MIME_TOO_LARGE',
      'MAILGATE_ERR_MIME_TOO_LARGE',
      'ok',
    ]);
  });

  it('passes --body and --headers to the document', async () => {
    const run = await runMailgate(['preview', 'samples/files/msg/properties.msg', '--body', 'html', '--headers', 'parsed']);
    const doc = parseLines(run.stdout)[0]!.document as { raw_email: { headers: Record<string, unknown>; body: Record<string, unknown> } };
    expect(Object.keys(doc.raw_email.body)).toEqual(['html']);
    expect(Object.keys(doc.raw_email.headers)).toEqual(['parsed']);
  });
});

describe('mailgate preview (json and table)', () => {
  it('json is one array holding the same objects as jsonl', async () => {
    const args = ['preview', 'samples/files/mbox', 'samples/files/bad/corrupt.msg'];
    const [json, jsonl] = await Promise.all([runMailgate([...args, '--format', 'json']), runMailgate([...args, '--format', 'jsonl'])]);
    expect(JSON.parse(json.stdout)).toEqual(parseLines(jsonl.stdout));
    expect(json.code).toBe(1);
    const empty = await runMailgate(['preview', 'samples/files/bad/not-mail.txt', '--format', 'json']);
    expect(JSON.parse(empty.stdout)).toHaveLength(1);
  });

  it('table shows one row per message with thread position, within the width', async () => {
    const run = await runMailgate([
      'preview',
      'samples/files/mbox/mboxrd.mbox',
      'samples/files/eml',
      'samples/files/bad/corrupt.msg',
      '--format',
      'table',
    ]);
    const rows = run.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^#\s+FROM\s+SUBJECT\s+THREAD\s+BODY\s+WARNINGS$/);
    expect(rows).toHaveLength(1 + 7);
    expect(rows.every((r) => [...r].length <= 120)).toBe(true);
    expect(rows.find((r) => r.includes('Joining the thread'))).toMatch(/3\/3/);
    expect(rows.find((r) => r.includes('INPUT_MSG_INVALID'))).toBeDefined();
  });
});

describe('spooled comment JSON', () => {
  const base: CommentType = {
    id: 'ab',
    timestamp: '2024-01-01T00:00:00.000Z',
    messages: [{ body: { text: 'a\t"b"' } }],
    user_properties: {},
  };

  it('splits exactly around the position value, whatever the texts hold', () => {
    const c: CommentType = {
      ...base,
      user_properties: { 'string:Sender': '"number:Position in Thread":0', 'number:Position in Thread': 0, 'number:Recipient Count': 1 },
      thread_id: 'cd',
      attachments: [{ name: '"number:Position in Thread":0', size: 1, content_type: 'x' }],
    };
    const [head, rest] = splitAtPosition(c)!;
    expect(`${head}7${rest}`).toBe(JSON.stringify({ ...c, user_properties: { ...c.user_properties, 'number:Position in Thread': 7 } }));
    const last = { ...c, user_properties: { 'number:Position in Thread': 3 } };
    expect(splitAtPosition(last)!.join('3')).toBe(JSON.stringify(last));
  });

  it('leaves a comment without the property whole', () => {
    expect(splitAtPosition(base)).toBeUndefined();
  });
});

describe('mailgate usage', () => {
  it('exits 2 on a bad flag value or a missing argument', async () => {
    expect((await runMailgate(['preview', 'x', '--format', 'xml'])).code).toBe(2);
    expect((await runMailgate(['preview', 'x', '--workers', '0'])).code).toBe(2);
    expect((await runMailgate(['preview'])).code).toBe(2);
  });

  it('prints help and exits 0', async () => {
    const run = await runMailgate(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('preview');
    expect(run.stdout).toContain('emulator');
  });
});
