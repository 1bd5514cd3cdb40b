/**
 * Exchange journal reports unwrapped at intake (route `unwrap: exchange_journal`): the original
 * replaces the report, the envelope the report lists becomes the origin's, and several reports
 * of one message are one comment whose envelope is their union.
 */
import { contentKey } from '../../src/pipeline/origin.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config/schema.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { createIntake, type ParseFn } from '../../src/pipeline/intake.js';
import { unwrapJournalReport } from '../../src/pipeline/journal.js';
import type { Inbound } from '../../src/pipeline/types.js';
import { preview } from '../../src/preview/index.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { FIRST_REPORT, ORIGINAL, SECOND_REPORT, journalReport } from '../support/journal-report.js';

const parse: ParseFn = async (bytes, o) => encodePreview(await preview(bytes, o));

let store: Store;
afterEach(async () => store?.close());

function intakeFor(unwrap: 'none' | 'exchange_journal') {
  const config = ConfigSchema.parse({
    routes: [
      {
        name: 'j',
        source: 'acme/journal',
        unwrap,
        user_properties: {
          'string:Bcc': '{envelope.journal.bcc}',
          'string:Recipients': '{envelope.to}',
          'string:Lists': '{envelope.journal.lists}',
        },
      },
    ],
  });
  return createIntake({ store, routes: new Map([['j', config.routes[0]!]]), parse, parsing: {}, maxOutbox: 1000 });
}

const inbound = (raw: Buffer, n: number): Inbound => ({
  raw,
  key: contentKey(raw),
  origin: {
    adapter: 'smtp',
    instance: '',
    id: contentKey(raw),
    details: {},
    envelope: { from: 'postmaster@contoso.com', to: ['journal@contoso.com'], provider: 'smtp' },
  },
  route: 'j',
  receivedAt: new Date(Date.UTC(2024, 5, 4, 10, n)),
});

async function items(route: string) {
  const list = await store.listItems({ route, limit: 10 });
  const full = await Promise.all(list.map(async (s) => ({ item: (await store.getItem(s.id))!, raw: (await store.itemRaw(s.id))! })));
  return full.sort((a, b) => a.item.id - b.item.id);
}

describe('Exchange journal reports', () => {
  it('reads the original unaltered and the envelope by line, with Bcc, expanded and forwarded recipients apart', () => {
    const a = unwrapJournalReport(FIRST_REPORT);
    expect(a.kind).toBe('unwrapped');
    if (a.kind !== 'unwrapped') return;
    expect(a.raw.equals(ORIGINAL)).toBe(true);
    expect(a.sender).toBe('alice@contoso.com');
    expect(a.journal).toEqual({
      to: ['bob@contoso.com', 'erin@contoso.com'],
      cc: ['carol@contoso.com'],
      bcc: ['dave@contoso.com'],
      recipient: [],
      expanded: ['erin@contoso.com'],
      lists: ['sales@contoso.com'],
      forwarded: [],
    });
    const b = unwrapJournalReport(SECOND_REPORT);
    expect(b.kind === 'unwrapped' && b.journal.forwarded).toEqual(['gina@fabrikam.com']);
  });

  it('makes two reports of one message one comment whose envelope is the union, in two batches and in one', async () => {
    for (const together of [false, true]) {
      store = await openStore('sqlite::memory:');
      const intake = intakeFor('exchange_journal');
      if (together) await intake.accept([inbound(FIRST_REPORT, 1), inbound(SECOND_REPORT, 2)]);
      else {
        await intake.accept([inbound(FIRST_REPORT, 1)]);
        await intake.accept([inbound(SECOND_REPORT, 2)]);
      }
      const [first, second] = await items('j');
      expect(first!.item.commentId).toBe(second!.item.commentId);
      expect(first!.item.commentId).toBe(Buffer.from('<budget-2025@contoso.com>').toString('hex'));
      expect(second!.raw.raw!.equals(ORIGINAL)).toBe(true);
      expect(second!.item.origin.envelope).toMatchObject({
        from: 'alice@contoso.com',
        provider: 'smtp',
        // Every recipient of both reports: To lines, then Cc, Bcc and Recipient lines.
        to: ['bob@contoso.com', 'erin@contoso.com', 'frank@contoso.com', 'gina@fabrikam.com', 'carol@contoso.com', 'dave@contoso.com'],
      });
      expect(second!.item.origin.envelope!.journal!.expanded).toEqual(['erin@contoso.com', 'frank@contoso.com']);
      expect(second!.item.origin.envelope!.journal!.forwarded).toEqual(['gina@fabrikam.com']);
      const props = second!.item.document.user_properties!;
      expect(props['string:Bcc']).toBe('dave@contoso.com');
      expect(props['string:Lists']).toBe('sales@contoso.com');
      // The text is the original's: the second report changes properties only (no new AI unit).
      expect(second!.item.document.raw_email.body).toEqual(first!.item.document.raw_email.body);
      await store.close();
    }
  });

  it('passes a malformed report through unchanged with a warning, and leaves reports alone on other routes', async () => {
    store = await openStore('sqlite::memory:');
    const broken = Buffer.from(
      FIRST_REPORT.toString('latin1').replace('Content-Type: message/rfc822', 'Content-Type: text/plain'),
      'latin1',
    );
    await intakeFor('exchange_journal').accept([inbound(broken, 1)]);
    const [kept] = await items('j');
    expect(kept!.raw.raw!.equals(broken)).toBe(true);
    expect(kept!.item.warnings?.map((w) => w.code) ?? []).toContain('MAILGATE_WARN_JOURNAL_MALFORMED');
    await store.close();

    store = await openStore('sqlite::memory:');
    await intakeFor('none').accept([inbound(FIRST_REPORT, 1)]);
    const [plain] = await items('j');
    expect(plain!.raw.raw!.equals(FIRST_REPORT)).toBe(true);
  });

  it('leaves a message that is no report as it is', () => {
    expect(unwrapJournalReport(ORIGINAL).kind).toBe('plain');
    const noRecipients = journalReport({ original: ORIGINAL, sender: 'a@x.com', subject: 's', messageId: '<m@x>', lines: [] });
    expect(unwrapJournalReport(noRecipients).kind).toBe('malformed');
  });
});
