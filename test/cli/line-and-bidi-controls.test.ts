/**
 * Regression: U+2028/U+2029 and bidi overrides from mail passed raw into the pretty log, the JSON
 * log, the preview JSONL (a line reader that ends lines at U+2028 split one record in two) and
 * the console (a subject with U+202E RIGHT-TO-LEFT OVERRIDE shown reversed, and whatever followed
 * it). Now they are `\u` escapes in logs and JSONL (the same value for a JSON reader) and isolated
 * in the console.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { cell } from '../../src/cli/preview/table.js';
import { escapeLineAndBidi } from '../../src/line-safe.js';
import { createLogger } from '../../src/logger.js';
import { isolate } from '../../src/server/page/console/dom.js';
import { jsonlOutput } from '../../src/sinks/outputs.js';
import type { StoredPrediction } from '../../src/store/types.js';
import { runMailgate } from './support/dist.js';

const LS = '\u2028';
const PS = '\u2029';
const RLO = '\u202e';
const SUBJECT = `Invoice${LS}split ${RLO}gpj.exe${PS}end`;
/** What a line reader that ends lines at U+2028/U+2029 (JavaScript's own, many log shippers) sees. */
const jsLines = (text: string) => text.split(/\r?\n|\u2028|\u2029/).filter((l) => l !== '');
const RAW_CONTROLS = /[\u2028\u2029\p{Bidi_Control}]/u;

function capture() {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString('utf8');
      cb();
    },
  });
  return { destination, text: () => text };
}

describe('line and bidi controls from mail (escaped in logs and JSONL, isolated in the console)', () => {
  it('a JSON log line keeps them as \\u escapes: one line, the same value for a JSON reader', () => {
    const out = capture();
    createLogger({ destination: out.destination }).info({ subject: SUBJECT, nested: { from: `${RLO}moc.evil` } }, `stored ${SUBJECT}`);
    const text = out.text();
    expect(text).not.toMatch(RAW_CONTROLS);
    expect(jsLines(text)).toHaveLength(1);
    const record = JSON.parse(text) as Record<string, unknown>;
    expect(record['subject']).toBe(SUBJECT);
    expect(record['msg']).toBe(`stored ${SUBJECT}`);
    expect(record['nested']).toEqual({ from: `${RLO}moc.evil` });
  });

  it('a pretty log line shows them as visible escapes', () => {
    const out = capture();
    createLogger({ destination: out.destination, format: 'pretty' }).info({ subject: SUBJECT }, `stored ${RLO}txt.exe`);
    const text = out.text();
    expect(text).not.toMatch(RAW_CONTROLS);
    expect(jsLines(text)).toHaveLength(1);
    expect(text).toContain('stored \\u202etxt.exe');
    expect(text).toContain('\\u2028split');
  });

  it('mailgate preview writes one JSONL record per message whose subject holds them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-bidi-'));
    const eml = [
      `From: =?utf-8?b?${Buffer.from(`Ann ${RLO}nnA`).toString('base64')}?= <ann@example.com>`,
      'To: b@example.com',
      `Subject: =?utf-8?b?${Buffer.from(SUBJECT).toString('base64')}?=`,
      'Message-ID: <bidi-1@example.com>',
      'Date: Tue, 03 Mar 2026 10:15:00 +0000',
      '',
      `Body${LS}with a separator`,
      '',
    ].join('\r\n');
    await writeFile(join(dir, 'bidi.eml'), eml);
    const run = await runMailgate(['preview', join(dir, 'bidi.eml'), '--format', 'jsonl']);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(RAW_CONTROLS);
    const lines = jsLines(run.stdout);
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0]!) as { comment: { messages: Array<{ subject: { text: string } }> } };
    expect(record.comment.messages[0]!.subject.text).toBe(SUBJECT);
    const table = await runMailgate(['preview', join(dir, 'bidi.eml'), '--format', 'table']);
    expect(table.stdout).not.toMatch(RAW_CONTROLS);
    expect(cell(`a${RLO}b`, 10)).toBe('a\\u202eb  ');
  });

  it('the predictions JSONL escapes them in the key (a file name read from a drop folder)', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'mailgate-bidi-')), 'predictions.jsonl');
    const out = jsonlOutput(file);
    const prediction: StoredPrediction = {
      id: 1,
      route: 'r',
      commentId: 'c1',
      key: `files:/drop/a${LS}b${RLO}.eml:0`,
      predictions: [],
      model: null,
      createdAt: '2026-03-03T10:15:00.000Z',
    };
    expect(await out.send([prediction], new AbortController().signal)).toBe('sent');
    await out.close();
    const text = await readFile(file, 'utf8');
    expect(text).not.toMatch(RAW_CONTROLS);
    expect(jsLines(text)).toHaveLength(1);
    expect((JSON.parse(text) as { key: string }).key).toBe(prediction.key);
  });

  it('the console isolates a value holding a bidi control and leaves other text as it is', () => {
    expect(isolate(`Invoice ${RLO}gpj.exe`)).toBe(`\u2068Invoice ${RLO}gpj.exe\u2069`);
    expect(isolate('Invoice 1234 is wrong')).toBe('Invoice 1234 is wrong');
    expect(isolate('שלום')).toBe('שלום');
    expect(escapeLineAndBidi(`a${LS}b`)).toBe('a\\u2028b');
  });
});
