/**
 * The account's filter is judged on the header fields it reads before any body is fetched:
 * a mailbox of mostly filtered mail (large newsletters, mailing-list mail, auto-replies) costs
 * their header lines on the wire, not their sources; the checkpoint still moves past them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointKey } from '../../adapters/imap/index.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { MemorySink, eventually } from './memory-sink.js';
import { textMessage } from './messages.js';
import { startProxy } from './proxy.js';
import { account, newUser, run } from './setup.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

/** A single-part HTML newsletter of about `kb` KiB: fetched whole if it were kept. */
function newsletter(i: number, kb: number, extra: string[] = []): string {
  const line = `<p>Issue ${i}: all the news that fits, and then some more of it for good measure.</p>`;
  return [
    `From: News ${i} <news@newsletter.example>`,
    'To: support@example.com',
    `Subject: newsletter ${i}`,
    `Message-ID: <news-${i}@newsletter.example>`,
    'Date: Mon, 02 Mar 2026 10:00:00 +0000',
    ...extra,
    'MIME-Version: 1.0',
    'Content-Type: text/html; charset=utf-8',
    '',
    line.repeat(Math.ceil((kb * 1024) / line.length)),
    '',
  ].join('\r\n');
}

describe('IMAP filters judged before the body is fetched', () => {
  it('a mailbox of mostly filtered mail: the filtered messages cost their header fields, not their 2.4 MB; kept ones arrive whole; the checkpoint moves past all', async () => {
    const { user, pass } = await newUser(server);
    const filtered = [
      ...Array.from({ length: 10 }, (_, i) => newsletter(i, 120)),
      ...Array.from({ length: 5 }, (_, i) => newsletter(10 + i, 120, ['List-Id: <weekly.lists.example>'])),
      ...Array.from({ length: 5 }, (_, i) => newsletter(20 + i, 120, ['Auto-Submitted: auto-replied'])).map((m) =>
        m.replace('@newsletter.example>', '@vacation.example>'),
      ),
    ];
    const kept = [textMessage(1, 'kept one'), newsletter(99, 120).replace(/news@newsletter\.example/, 'editor@partner.example')];
    await server.append(user, 'INBOX', [...filtered.slice(0, 10), kept[0]!, ...filtered.slice(10), kept[1]!]);
    const proxy = await startProxy(server.port);
    const sink = new MemorySink();
    const controls = { participants: { deny: ['*@newsletter.example'] }, skip: ['auto_replies', 'mailing_lists'] };
    const r = run([{ ...account(server, user, pass, controls), port: proxy.port }], sink);
    await eventually(() => sink.accepted.length === 2 && r.adapter.accountHealth()[0]!.state === 'idle');
    await r.stop();
    const bytes = proxy.bytesFromServer;
    await proxy.close();
    const filteredBytes = filtered.reduce((n, m) => n + m.length, 0);
    const keptBytes = kept.reduce((n, m) => n + m.length, 0);
    expect(filteredBytes).toBeGreaterThan(2_400_000);
    // The kept messages whole, the header fields of all 22, and the protocol around them; before
    // the filter was judged first, every filtered source crossed the wire too (≥ 2.4 MB more).
    expect(bytes).toBeLessThan(keptBytes + 40_000);
    expect(sink.subjects().sort()).toEqual(['kept one', 'newsletter 99']);
    expect(sink.accepted.find((m) => m.origin.details['uid'] === 22)!.raw.length).toBe(Buffer.byteLength(kept[1]!));
    expect(sink.checkpoints.get(checkpointKey(user, 'INBOX'))).toMatchObject({ lastUid: 22 });
    // Never fetched beyond the header fields: no FETCH of a source or of a structure names them.
    const bodyFetches = proxy.commandLines.filter((l) => /^UID FETCH .*(BODY\.PEEK\[\]|BODYSTRUCTURE)/.test(l));
    expect(bodyFetches.length).toBeGreaterThan(0);
    expect(new Set(bodyFetches.flatMap((l) => l.split(' ')[2]!.split(',')))).toEqual(new Set(['11', '22']));
  });
});
