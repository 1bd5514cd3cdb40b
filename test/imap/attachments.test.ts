import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OMITTED_SIZE_HEADER } from '../../adapters/imap/index.js';
import { assemble } from '../../adapters/imap/assemble.js';
import { piecesFromEnds, SUFFIX_BYTES } from '../../adapters/imap/ends.js';
import {
  FIRST_FETCH_SOURCE_BYTES,
  HEAD_BYTES,
  headsFromPrefix,
  planMessage,
  sectionsFor,
  stubParts,
} from '../../adapters/imap/structure.js';
import { buildDocument } from '../../src/document/index.js';
import { parseMessage } from '../../src/mime/parse.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { attachmentMessage, textMessage } from './messages.js';
import { MemorySink, eventually } from './memory-sink.js';
import { startProxy } from './proxy.js';
import { account, newUser, run } from './setup.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

const forwarded = [
  'From: a@example.com',
  'To: b@example.com',
  'Subject: forwarded with an attached message',
  'Message-ID: <fwd-1@mailgate.test>',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="fwd"',
  '',
  '--fwd',
  'Content-Type: text/plain; charset=us-ascii',
  '',
  'See the attached message.',
  '--fwd',
  'Content-Type: message/rfc822',
  '',
  textMessage(99, 'the inner message'),
  '--fwd--',
  '',
].join('\r\n');

/** Messages whose attachments exercise every stub rule: padding 0/1/2, line widths, small parts, inline images. */
const corpus = [
  attachmentMessage(1, [{ bytes: 3_000_000, name: 'big.pdf', type: 'application/pdf' }]),
  attachmentMessage(2, [
    { bytes: 100_001, name: 'pad2.bin' },
    { bytes: 100_002, name: 'pad1.bin', width: 64 },
  ]),
  attachmentMessage(3, [
    { bytes: 50_000, name: 'photo.png', type: 'image/png', inline: true },
    { bytes: 2_000, name: 'small.txt', type: 'text/plain' },
  ]),
  attachmentMessage(4, [
    { bytes: 30_000, name: 'notes.txt', type: 'text/plain' },
    { bytes: 20_000, name: 'invite.ics', type: 'text/calendar' },
  ]),
  forwarded,
  textMessage(5),
  // Same shape and sizes: their pieces come in one shared UID FETCH.
  attachmentMessage(6, [{ bytes: 60_000, name: 'twin-a.bin' }]),
  attachmentMessage(7, [{ bytes: 60_000, name: 'twin-b.bin' }]),
];

async function syncCorpus(viaProxy: boolean): Promise<{ sink: MemorySink; user: string; bytes: number }> {
  const { user, pass } = await newUser(server);
  await server.append(user, 'INBOX', corpus);
  const proxy = viaProxy ? await startProxy(server.port) : undefined;
  const sink = new MemorySink();
  const r = run([{ ...account(server, user, pass), port: proxy?.port ?? server.port }], sink);
  await eventually(() => sink.accepted.length === corpus.length);
  await r.stop();
  const bytes = proxy?.bytesFromServer ?? 0;
  await proxy?.close();
  return { sink, user, bytes };
}

describe('attachments never cross the wire', () => {
  it('transfers a few kB for 3.4 MB of attachments (bytes counted by a TCP proxy)', async () => {
    const { sink, bytes } = await syncCorpus(true);
    const total = corpus.reduce((n, m) => n + m.length, 0);
    expect(total).toBeGreaterThan(4_500_000);
    expect(bytes).toBeLessThan(120_000);
    const first = sink.accepted[0]!.raw.toString('latin1');
    expect(first).toContain(`${OMITTED_SIZE_HEADER}: 3000000`);
    expect(first.length).toBeLessThan(3_000);
  });

  it('asks for BODYSTRUCTURE only of messages large enough to hold an attachment worth leaving on the server', async () => {
    const { user, pass } = await newUser(server);
    const small = [0, 1, 2].map((i) => textMessage(i));
    await server.append(user, 'INBOX', [...small, corpus[0]!]);
    const proxy = await startProxy(server.port);
    const sink = new MemorySink();
    const r = run([{ ...account(server, user, pass), port: proxy.port }], sink);
    await eventually(() => sink.accepted.length === 4);
    await r.stop();
    await proxy.close();
    const structures = proxy.commandLines.filter((l) => /BODYSTRUCTURE/i.test(l));
    // UIDs 1-3 are the small messages, complete with the first FETCH; UID 4 holds the attachments.
    expect(structures).toEqual([expect.stringMatching(/^UID FETCH 4 \(/i)]);
    expect(sink.accepted.slice(0, 3).map((m) => m.raw.toString('latin1'))).toEqual(small.map((m) => m.toString()));
    expect(sink.accepted[3]!.raw.toString('latin1')).toContain(`${OMITTED_SIZE_HEADER}: 3000000`);
  });

  it('builds the same document from the stubbed message as from the full source', async () => {
    const { sink, user } = await syncCorpus(false);
    const full = await server.withClient(user, async (c) => {
      await c.mailboxOpen('INBOX', { readOnly: true });
      return new Map((await c.fetchAll('1:*', { uid: true, source: true }, { uid: true })).map((m) => [m.uid, m.source!]));
    });
    let stubbed = 0;
    for (const m of sink.accepted) {
      const source = full.get(m.origin.details['uid'] as number)!;
      if (!m.raw.equals(source)) stubbed += 1;
      expect(buildDocument(parseMessage(m.raw)).document).toEqual(buildDocument(parseMessage(source)).document);
    }
    // Messages 1-4, 6 and 7 were stubbed; the forwarded message and the text-only one came whole.
    expect(stubbed).toBe(6);
  });

  it('assembles a stubbed message from the two ends of its source exactly as from the parts the server cuts', async () => {
    const { user } = await newUser(server);
    const alternative = [
      'From: a@example.com',
      'To: b@example.com',
      'Subject: alternative and attachment',
      'Message-ID: <alt-1@mailgate.test>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="outer"',
      '',
      'preamble',
      '--outer',
      'Content-Type: multipart/alternative; boundary="inner"',
      '',
      '--inner',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Plain text.',
      '--inner',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>HTML text.</p>',
      '--inner--',
      '',
      '--outer',
      'Content-Type: application/octet-stream; name="x.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.alloc(30_000, 7).toString('base64').replace(/.{76}/g, '$&\r\n'),
      '--outer--',
      'epilogue',
      '',
    ].join('\r\n');
    await server.append(user, 'INBOX', [...corpus, alternative]);
    const counts = await server.withClient(user, async (c) => {
      await c.mailboxOpen('INBOX', { readOnly: true });
      const metas = await c.fetchAll(
        '1:*',
        { uid: true, size: true, bodyStructure: true, source: { start: 0, maxLength: FIRST_FETCH_SOURCE_BYTES } },
        { uid: true },
      );
      let fromEnds = 0;
      let elsewhere = 0;
      for (const m of metas) {
        const plan = planMessage(m.bodyStructure);
        if (plan.mode !== 'pieces') continue;
        const start = Math.max(m.source!.length, m.size! - SUFFIX_BYTES);
        const tail = await c.fetchOne(String(m.uid), { uid: true, source: { start, maxLength: m.size! - start } }, { uid: true });
        const ends = piecesFromEnds(plan.root, { prefix: m.source!, suffix: (tail as { source: Buffer }).source, suffixStart: start });
        if (ends === undefined) {
          elsewhere += 1;
          continue;
        }
        // The same message from the server's own cuts of it.
        const parts = stubParts(plan.root);
        const heads = await c.fetchOne(
          String(m.uid),
          { uid: true, bodyParts: parts.map((key) => ({ key, start: 0, maxLength: HEAD_BYTES })) },
          { uid: true },
        );
        const pieces = await c.fetchOne(String(m.uid), { uid: true, headers: true, bodyParts: sectionsFor(plan.root) }, { uid: true });
        if (!heads || !pieces) throw new Error(`UID ${m.uid} not answered`);
        const serverHeads = new Map([...heads.bodyParts!].map(([k, v]) => [k.toLowerCase(), v]));
        const expected = assemble(plan.root, pieces.headers, pieces.bodyParts, serverHeads);
        expect(assemble(plan.root, ends.header, ends.parts, ends.heads).equals(expected), `UID ${m.uid}`).toBe(true);
        fromEnds += 1;
      }
      return { fromEnds, elsewhere };
    });
    // Messages 1, 6, 7 and the alternative one end with their only stubbed attachment; 2 and 4
    // have two (the first lies between the ends), 3 has a small part after its stubbed image.
    expect(counts).toEqual({ fromEnds: 4, elsewhere: 3 });
  });

  it('finds the heads of stubbed parts in the source prefix exactly as the server answers BODY[part]<0.256>', async () => {
    const { user } = await newUser(server);
    const nested = attachmentMessage(8, [
      { bytes: 40_000, name: 'a.bin' },
      { bytes: 40_000, name: 'b.bin', width: 64 },
    ]);
    await server.append(user, 'INBOX', [...corpus, nested]);
    const compared = await server.withClient(user, async (c) => {
      await c.mailboxOpen('INBOX', { readOnly: true });
      const metas = await c.fetchAll(
        '1:*',
        { uid: true, bodyStructure: true, source: { start: 0, maxLength: FIRST_FETCH_SOURCE_BYTES } },
        { uid: true },
      );
      let found = 0;
      for (const m of metas) {
        const plan = planMessage(m.bodyStructure);
        if (plan.mode !== 'pieces') continue;
        const heads = headsFromPrefix(plan.root, m.source!);
        const parts = stubParts(plan.root);
        const answer = await c.fetchOne(
          String(m.uid),
          { uid: true, bodyParts: parts.map((key) => ({ key, start: 0, maxLength: HEAD_BYTES })) },
          { uid: true },
        );
        if (answer === false || answer === undefined) throw new Error(`UID ${m.uid} not answered`);
        for (const part of parts) {
          if (!heads.has(part)) continue;
          found += 1;
          expect(heads.get(part)!.equals(answer.bodyParts!.get(part)!), `UID ${m.uid} part ${part}`).toBe(true);
        }
      }
      return found;
    });
    // Most heads are in the prefix (the first attachment of each message at least).
    expect(compared).toBeGreaterThanOrEqual(7);
  });
});
