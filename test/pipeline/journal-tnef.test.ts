/**
 * Journal reports in TNEF form were passed through as malformed reports: the original and,
 * without a text part, the envelope live inside `winmail.dat`. Reports written to MS-XJRNL's
 * envelope format with the TNEF laid out as MS-OXTNEF describes (test/support/tnef-writer.ts).
 */
import { contentKey } from '../../src/pipeline/origin.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config/schema.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { createIntake, type ParseFn } from '../../src/pipeline/intake.js';
import { unwrapJournalReport } from '../../src/pipeline/journal.js';
import type { Inbound } from '../../src/pipeline/types.js';
import { preview, previewSync } from '../../src/preview/index.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { FIRST_REPORT, ORIGINAL, ORIGINAL_TNEF, tnefJournalReport } from '../support/journal-report.js';
import { PT } from '../support/tnef-writer.js';

const base = {
  original: ORIGINAL,
  originalTnef: ORIGINAL_TNEF,
  sender: 'alice@contoso.com',
  subject: 'Budget 2025',
  messageId: '<budget-2025@contoso.com>',
};
const SECOND = [
  'To: frank@contoso.com, Expanded: sales@contoso.com',
  'Bcc: henry@contoso.com',
  'To: gina@fabrikam.com, Forwarded: bob@contoso.com',
];

describe('Exchange journal reports in TNEF form', () => {
  it('takes the original from the attached e-mail inside winmail.dat, and the envelope from the text part', () => {
    const r = unwrapJournalReport(tnefJournalReport({ ...base, lines: SECOND }));
    expect(r.kind).toBe('unwrapped');
    if (r.kind !== 'unwrapped') return;
    expect(r.sender).toBe('alice@contoso.com');
    expect(r.journal).toMatchObject({
      to: ['frank@contoso.com', 'gina@fabrikam.com'],
      bcc: ['henry@contoso.com'],
      lists: ['sales@contoso.com'],
    });
    expect(r.journal.forwarded).toEqual(['gina@fabrikam.com']);
    // Exchange's transport headers, the plain body, the attachment as metadata.
    const doc = previewSync(r.raw).document;
    expect(r.raw.toString('latin1')).toMatch(/^From: Alice <alice@contoso.com>\r\n/);
    expect(r.raw.toString('latin1')).toContain('Message-ID: <budget-2025@contoso.com>');
    expect(JSON.stringify(doc.raw_email.body)).toContain('The budget is attached in spirit.');
    expect(doc.raw_email.attachments).toEqual([
      { name: 'budget.xlsx', size: 1234, content_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' },
    ]);
  });

  it('reads the envelope from the TNEF body when the report has no text part', () => {
    const r = unwrapJournalReport(
      tnefJournalReport({ ...base, lines: ['Cc: carol@contoso.com', 'Recipient: ivan@contoso.com'], envelopeInTnef: true }),
    );
    expect(r.kind === 'unwrapped' && r.journal).toMatchObject({ cc: ['carol@contoso.com'], recipient: ['ivan@contoso.com'] });
  });

  it('takes an attached .eml inside winmail.dat byte for byte', () => {
    const r = unwrapJournalReport(tnefJournalReport({ ...base, lines: ['To: bob@contoso.com'], attachEml: true }));
    expect(r.kind === 'unwrapped' && r.raw.equals(ORIGINAL)).toBe(true);
  });

  it('builds the headers from the properties of an original Exchange kept no transport headers for, with the warning', () => {
    const bare = {
      props: [
        { type: PT.UNICODE, id: 0x0037, value: 'Budget 2025' },
        { type: PT.UNICODE, id: 0x0c1a, value: 'Alice' },
        { type: PT.UNICODE, id: 0x5d01, value: 'alice@contoso.com' },
        { type: PT.UNICODE, id: 0x1035, value: '<budget-2025@contoso.com>' },
        { type: PT.SYSTIME, id: 0x0039, value: new Date(Date.UTC(2024, 5, 4, 10)) },
        { type: PT.UNICODE, id: 0x1000, value: 'The budget is attached in spirit.\r\n' },
      ],
      recipients: [
        [
          { type: PT.LONG, id: 0x0c15, value: 1 },
          { type: PT.UNICODE, id: 0x3001, value: 'Bob' },
          { type: PT.UNICODE, id: 0x39fe, value: 'bob@contoso.com' },
        ],
      ],
    };
    const r = unwrapJournalReport(tnefJournalReport({ ...base, originalTnef: bare, lines: ['To: bob@contoso.com'] }));
    expect(r.kind).toBe('unwrapped');
    if (r.kind !== 'unwrapped') return;
    const p = previewSync(r.raw);
    expect(p.warnings.map((w) => w.code)).toContain('MAILGATE_WARN_HEADERS_SYNTHESIZED');
    expect(r.raw.toString('latin1')).toMatch(
      /From: "Alice" <alice@contoso.com>\r\nTo: "Bob" <bob@contoso.com>\r\nSubject: Budget 2025\r\nDate: Tue, 04 Jun 2024 10:00:00 \+0000/,
    );
    expect(r.raw.toString('latin1')).toContain('Message-ID: <budget-2025@contoso.com>');
  });

  it('passes a report whose winmail.dat does not hold together through unchanged, with a warning naming it', () => {
    const report = tnefJournalReport({ ...base, lines: ['To: bob@contoso.com'] });
    const broken = Buffer.from(
      report.toString('latin1').replace(/(filename="winmail.dat"\r\nContent-Transfer-Encoding: base64\r\n\r\n)eJ8\+Ig/, '$1AAAAAA'),
      'latin1',
    );
    const r = unwrapJournalReport(broken);
    expect(r.kind).toBe('malformed');
    expect(r.kind === 'malformed' && r.warning.message).toMatch(/winmail\.dat cannot be read/);
  });
});

describe('a MIME report and a TNEF report of one message', () => {
  let store: Store;
  afterEach(async () => store?.close());

  it('are one comment, billed once, whose envelope is the union of both', async () => {
    store = await openStore('sqlite::memory:');
    const parse: ParseFn = async (bytes, o) => encodePreview(await preview(bytes, o));
    const route = ConfigSchema.parse({
      routes: [
        { name: 'j', source: 'acme/journal', unwrap: 'exchange_journal', user_properties: { 'string:Bcc': '{envelope.journal.bcc}' } },
      ],
    }).routes[0]!;
    const intake = createIntake({ store, routes: new Map([['j', route]]), parse, parsing: {}, maxOutbox: 1000 });
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
    await intake.accept([inbound(FIRST_REPORT, 1)]);
    await intake.accept([inbound(tnefJournalReport({ ...base, lines: SECOND }), 2)]);
    const list = await store.listItems({ route: 'j', limit: 10 });
    const [first, second] = (await Promise.all(list.map((s) => store.getItem(s.id)))).sort((a, b) => a!.id - b!.id);
    expect(second!.commentId).toBe(first!.commentId);
    expect(second!.document.raw_email.body).toEqual(first!.document.raw_email.body);
    expect(second!.document.user_properties!['string:Bcc']).toBe('dave@contoso.com,henry@contoso.com');
  });
});
