/**
 * The parse worker takes a message's facts (sender, subject, Message-ID, timestamp) from what
 * building its comment read, instead of parsing those headers again: they must be exactly the
 * facts messageFacts reads from the stored document, which the console falls back to.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { messageFacts } from '../../src/preview/facts.js';
import { previewWithFacts } from '../../src/preview/index.js';

const corpus = ['mime', 'quotes'].flatMap((folder) => {
  const dir = fileURLToPath(new URL(`../../samples/${folder}/`, import.meta.url));
  return readdirSync(dir)
    .filter((f) => f.endsWith('.eml'))
    .map((f) => readFileSync(`${dir}${f}`));
});

const mail = (...headers: string[]) => Buffer.from(`${headers.join('\r\n')}\r\n\r\nHello there.\r\n`);

const edges = [
  mail('From: undisclosed-recipients:;', 'From: "B" <b@example.com>', 'Subject: two From fields, the first without an address'),
  mail('From: <>', 'From: c@example.com', 'Subject: an empty first From'),
  mail('From: Anna <a@example.com>', 'Date: Mon, 1 Jan 1900 00:00:00 +0000', 'Subject: a date before 1950'),
  mail('From: a@example.com', 'Date: Sat, 31 Dec 2050 23:59:59 +0000'),
  mail('From: a@example.com', 'Date: Fri, 31 Dec 2049 23:59:59 +0000', 'Message-ID: not an id <x'),
  mail('From: a@example.com', 'Date: Sun, 1 Jan 1950 00:00:00 +0000', 'Message-ID:   <spaced@example.com>  '),
  mail('From: a@example.com', 'Date: yesterday', 'Subject: =?x-unknown?Q?caf=E9?=', 'Message-ID: bare@example.com'),
  mail(`From: ${'n'.repeat(300)} <${'l'.repeat(300)}@example.com>`, `Subject:    ${'s'.repeat(400)}   `),
  mail('Subject: no sender, no date, no id'),
  mail('From: =?UTF-8?B?SsO2cmc=?= <joerg@example.com>', 'Subject:', 'Message-ID: <>'),
];

describe('message facts', () => {
  it('are the facts messageFacts reads from the document, for the sample corpus and edge cases, in every mode', () => {
    expect(corpus.length).toBeGreaterThan(20);
    for (const raw of [...corpus, ...edges])
      for (const headers of ['raw', 'parsed'] as const) {
        const { result, facts } = previewWithFacts(raw, { headers, receivedAt: new Date(Date.UTC(2026, 0, 1)) });
        expect(facts).toEqual(messageFacts(result.document));
      }
  });

  it('are null where a date lies outside 1950-2049, though the comment carries it clamped', () => {
    const { result, facts } = previewWithFacts(edges[2]!);
    expect(result.comment.messages[0]!.sent_at).toBe('1950-01-01T00:00:00.000Z');
    expect(facts).toMatchObject({ sender: 'a@example.com', senderName: 'Anna', timestamp: null });
    expect(previewWithFacts(edges[0]!).facts).toMatchObject({ sender: null, senderName: null });
  });
});
