/**
 * The two ways of reading a message give the same document where it matters: `format=raw` (the
 * RFC 5322 bytes) and `format=full` (the parsed tree, attachments as stubs) — subject, sender,
 * recipients, date, Message-ID (so the comment id), body text after whitespace normalisation,
 * attachment names, sizes and types. Read from the stand-in over HTTP, parsed by mailgate's parser.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleFull, type FullMessage } from '../../adapters/gmail/assemble.js';
import { gmailTokens } from '../../adapters/gmail/auth.js';
import { GmailClient } from '../../adapters/gmail/client.js';
import { fetchContents } from '../../adapters/gmail/content.js';
import { QuotaBucket } from '../../adapters/gmail/quota.js';
import { sampleMessage, startGmailStandIn, type GmailStandIn, type MessageSpec } from '../../adapters/gmail/stand-in/index.js';
import { buildDocument } from '../../src/document/index.js';
import { parseMessage } from '../../src/mime/parse.js';
import { entryFor } from './setup.js';

const USER = 'support@example.test';
let standIn: GmailStandIn;
let client: GmailClient;

const specs: MessageSpec[] = [
  sampleMessage(1, { attachmentBytes: 1 }),
  sampleMessage(2, { attachmentBytes: 250_000 }),
  {
    ...sampleMessage(3),
    subject: 'Réclamation — commande n° 3 ✓',
    from: { name: 'Zoë Müller', address: 'zoe@example.de' },
    cc: [{ address: 'team@example.test' }, { name: 'Ops', address: 'ops@example.test' }],
    text: 'Guten Tag,\n\n  die Lieferung   fehlt.\n\n\nViele Grüße\n',
    attachments: [
      { name: 'résumé.pdf', contentType: 'application/pdf', size: 12_345 },
      { name: 'photo 1.jpg', contentType: 'image/jpeg', size: 80_001 },
      { name: 'notes.txt', contentType: 'text/plain', size: 10 },
    ],
  },
];

beforeAll(async () => {
  standIn = await startGmailStandIn();
  standIn.addMailbox(USER);
  const entry = entryFor(standIn, [USER]);
  client = new GmailClient(
    standIn.url,
    USER,
    gmailTokens(entry).forUser(USER),
    new QuotaBucket({ perSecond: 250, perMinute: 15_000 }),
    10_000,
  );
});
afterAll(async () => {
  await standIn?.close();
});

function essentials(raw: Buffer) {
  const parsed = parseMessage(raw);
  const { document } = buildDocument(parsed);
  const header = (name: string) => parsed.headers.filter((h) => h.name.toLowerCase() === name).map((h) => h.value.trim());
  const body = document.raw_email.body;
  return {
    subject: header('subject'),
    from: header('from'),
    to: header('to'),
    cc: header('cc'),
    date: header('date'),
    messageId: header('message-id'),
    commentId: document.comment_id,
    body: ('plain' in body ? body.plain : body.html).replace(/\s+/g, ' ').trim(),
    attachments: document.raw_email.attachments,
  };
}

describe('gmail content: format=raw and format=full give the same document', () => {
  it('on messages with attachments, ASCII and not', async () => {
    const ids = standIn.deliver(USER, specs);
    for (const id of ids) {
      const signal = AbortSignal.timeout(10_000);
      const raw = await client.call<{ raw: string }>('messages.get', `/messages/${id}`, { query: { format: 'raw' }, signal });
      const full = await client.call<FullMessage>('messages.get', `/messages/${id}`, { query: { format: 'full' }, signal });
      // The metadata only: no attachment byte crossed the wire.
      expect(JSON.stringify(full).length).toBeLessThan(10_000);
      const viaFull = essentials(assembleFull(full));
      const viaRaw = essentials(Buffer.from(raw.raw, 'base64url'));
      expect(viaFull).toEqual(viaRaw);
      expect(viaRaw.attachments!.length).toBeGreaterThan(0);
    }
  });

  it('the adapter reads the large ones through format=full and the others raw, in one batch', async () => {
    const ids = standIn.deliver(USER, [sampleMessage(10), sampleMessage(11, { attachmentBytes: 5_000 })]);
    const before = standIn.http.batch;
    const got = await fetchContents(
      client,
      ids.map((id) => ({ id })),
      new Set([ids[1]!]),
      { batchSize: 50, signal: AbortSignal.timeout(10_000) },
    );
    expect(got.map((c) => c.viaFull)).toEqual([false, true]);
    expect(standIn.http.batch).toBe(before + 1);
    expect(essentials(got[1]!.raw).attachments).toEqual([{ name: 'invoice-11.pdf', size: 5_000, content_type: 'application/pdf' }]);
    expect(got[0]!.raw.toString()).toContain('Message-ID: <sample-10@example.com>');
  });
});
