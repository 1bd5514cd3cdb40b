/**
 * The two ways of reading a message give the same document where it matters: the raw MIME
 * (`$value`) and the JSON path (`$select`/`$expand=attachments`, attachments as stubs) — subject,
 * sender, recipients, date, Message-ID (so the comment id), body text after whitespace
 * normalisation, attachment names, sizes and types. Read from the stand-in over HTTP, parsed by
 * mailgate's parser.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTACHMENT_EXPAND, assembleMessage, JSON_SELECT, type GraphMessage } from '../../adapters/graph/assemble.js';
import { graphTokens } from '../../adapters/graph/auth.js';
import { MailboxClient } from '../../adapters/graph/client.js';
import { fetchContents } from '../../adapters/graph/content.js';
import { MailboxLimiter } from '../../adapters/graph/limiter.js';
import { sampleMessage, startGraphStandIn, type GraphStandIn, type MessageSpec } from '../../adapters/graph/stand-in/index.js';
import { buildDocument } from '../../src/document/index.js';
import { parseMessage } from '../../src/mime/parse.js';
import { entryFor } from './setup.js';

const USER = 'support@contoso.test';
let standIn: GraphStandIn;
let client: MailboxClient;

const specs: MessageSpec[] = [
  sampleMessage(1, { attachmentBytes: 1 }),
  sampleMessage(2, { attachmentBytes: 250_000 }),
  {
    ...sampleMessage(3),
    subject: 'Réclamation — commande n° 3 ✓',
    from: { name: 'Zoë Müller, Kundin', address: 'zoe@example.de' },
    cc: [{ address: 'team@contoso.test' }, { name: 'Ops', address: 'ops@contoso.test' }],
    text: 'Guten Tag,\n\n  die Lieferung   fehlt.\n\n\nViele Grüße\n',
    attachments: [
      { name: 'résumé.pdf', contentType: 'application/pdf', size: 12_345 },
      { name: 'photo 1.jpg', contentType: 'image/jpeg', size: 80_001 },
      { name: 'notes.txt', contentType: 'text/plain', size: 10 },
    ],
  },
];

beforeAll(async () => {
  standIn = await startGraphStandIn();
  standIn.addMailbox(USER);
  const entry = entryFor(standIn, [USER]);
  client = new MailboxClient(
    standIn.graphUrl,
    USER,
    graphTokens(entry),
    new MailboxLimiter({ concurrency: 4, perWindow: 10_000, windowMs: 600_000 }),
    10_000,
  );
});
afterAll(async () => {
  await standIn?.close();
});

/** What must agree between the two paths. */
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

describe('graph content: $value and $select/$expand give the same document', () => {
  it('on messages with attachments, ASCII and not', async () => {
    const ids = standIn.deliver(USER, 'inbox', specs);
    for (const id of ids) {
      const mime = await client.request(`/messages/${encodeURIComponent(id)}/$value`, { signal: AbortSignal.timeout(10_000) });
      const json = await client.request(`/messages/${encodeURIComponent(id)}?$select=${JSON_SELECT}&$expand=${ATTACHMENT_EXPAND}`, {
        prefer: ['outlook.body-content-type="text"'],
        signal: AbortSignal.timeout(10_000),
      });
      const m = JSON.parse(json.body.toString('utf8')) as GraphMessage;
      // The metadata only: no attachment byte crossed the wire.
      expect((m.attachments as Array<Record<string, unknown>>).every((a) => a['contentBytes'] === undefined)).toBe(true);
      const viaJson = essentials(assembleMessage(m));
      const viaMime = essentials(mime.body);
      expect(viaJson).toEqual(viaMime);
      expect(viaMime.attachments!.length).toBeGreaterThan(0);
    }
  });

  it('the adapter reads messages with attachments through JSON and the others as MIME, in $batch', async () => {
    const ids = standIn.deliver(USER, 'inbox', [sampleMessage(10), sampleMessage(11, { attachmentBytes: 5_000 })]);
    const before = standIn.http.batch;
    const got = await fetchContents(
      client,
      ids.map((id, i) => ({ id, hasAttachments: i === 1 })),
      4,
      AbortSignal.timeout(10_000),
    );
    expect(got.map((c) => c.viaJson)).toEqual([false, true]);
    expect(standIn.http.batch).toBe(before + 1);
    expect(essentials(got[1]!.raw).attachments).toEqual([{ name: 'invoice-11.pdf', size: 5_000, content_type: 'application/pdf' }]);
    expect(got[0]!.raw.toString()).toContain('Message-ID: <graph-10@mail.example.com>');
  });
});
