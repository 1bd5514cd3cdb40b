/**
 * The shared mailbox controls on Gmail (against its stand-in over HTTP): participants and a
 * start time leave messages out before intake — counted through the sink, never handed over —
 * while the history cursor moves past them.
 */
import { describe, expect, it } from 'vitest';
import { createGmailAdapters } from '../../adapters/gmail/index.js';
import { sampleMessage } from '../../adapters/gmail/stand-in/index.js';
import type { FilteredReport } from '../../src/pipeline/types.js';
import { MemorySink, quiet, until } from '../graph/setup.js';
import { entryFor, gmailStandInPerTest } from '../gmail/setup.js';

const t = gmailStandInPerTest();

const USER = 'support@example.test';

/** A sink that also takes the filter's reports, as the runtime's does. */
class CountingSink extends MemorySink {
  readonly left: FilteredReport[] = [];
  filtered(r: FilteredReport): void {
    this.left.push(r);
  }
}

describe('gmail: mailbox controls', () => {
  it('participants and since leave messages out, counted and never handed to intake', async () => {
    const LATER = 'later@example.test';
    t.standIn.addMailbox(USER);
    t.standIn.addMailbox(LATER);
    const specs = Array.from({ length: 4 }, (_, i) => sampleMessage(i, { mailbox: USER }));
    specs[2] = { ...specs[2]!, from: { address: 'news@newsletter.example' } };
    t.standIn.deliver(USER, specs);
    t.standIn.deliver(LATER, [sampleMessage(9, { mailbox: LATER, tag: 'later' })]);
    const sink = new CountingSink();
    const entry = entryFor(t.standIn, [], {
      mailboxes: [
        { user: USER, participants: { deny: ['*@newsletter.example'] } },
        // Gmail received it now: a start time tomorrow leaves it out.
        { user: LATER, since: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10) },
      ],
    });
    const adapters = createGmailAdapters(entry, { logger: quiet });
    for (const a of adapters) void a.start(sink, t.stop.signal);
    await until(() => adapters.every((a) => a.health()[0]!.state === 'idle'), 'a round done');
    const subjects = [...sink.items.values()].map((i) => /Subject: ([^\r\n]*)/.exec(i.raw.toString('latin1'))?.[1]).sort();
    expect(subjects).toEqual([
      'Order 0: where is my parcel? (sample)',
      'Order 1: where is my parcel? (sample)',
      'Order 3: where is my parcel? (sample)',
    ]);
    expect(sink.left.map((f) => `${f.instance}:${f.reason}`).sort()).toEqual([
      `workspace/${LATER}:since`,
      `workspace/${USER}:participants`,
    ]);
    expect(sink.left[0]).toMatchObject({ adapter: 'gmail', route: 'support', folder: 'INBOX' });
    expect(adapters[0]!.controls).toEqual({ enabled: true, disableAfterMs: 86_400_000 });
    expect(adapters[0]!.health()[0]!.folders).toEqual([expect.objectContaining({ folder: 'INBOX', state: 'up_to_date' })]);
  });

  it('a start time in the past: mail Gmail received before it is left out, mail received after it read (a date and a duration)', async () => {
    const DATED = 'dated@example.test';
    const SPAN = 'span@example.test';
    const day = 86_400_000;
    for (const user of [DATED, SPAN]) {
      t.standIn.addMailbox(user);
      t.standIn.deliver(user, [
        { ...sampleMessage(1, { mailbox: user, tag: 'old' }), receivedAt: new Date(Date.now() - 10 * day) },
        { ...sampleMessage(2, { mailbox: user, tag: 'recent' }), receivedAt: new Date(Date.now() - day) },
      ]);
    }
    const sink = new CountingSink();
    const entry = entryFor(t.standIn, [], {
      mailboxes: [
        { user: DATED, since: new Date(Date.now() - 5 * day).toISOString().slice(0, 10) },
        // Counted back from the mailbox's first sync (now).
        { user: SPAN, since: 'P5D' },
      ],
    });
    const adapters = createGmailAdapters(entry, { logger: quiet });
    for (const a of adapters) void a.start(sink, t.stop.signal);
    await until(() => adapters.every((a) => a.health()[0]!.state === 'idle'), 'a round done');
    const kept = [...sink.items.values()].map((i) => `${i.key.split(':')[1]}:${/Subject: ([^\r\n]*)/.exec(i.raw.toString('latin1'))?.[1]}`);
    expect(kept.sort()).toEqual([
      `workspace/${DATED}:Order 2: where is my parcel? (recent)`,
      `workspace/${SPAN}:Order 2: where is my parcel? (recent)`,
    ]);
    expect(sink.left.map((f) => `${f.instance}:${f.reason}`).sort()).toEqual([`workspace/${DATED}:since`, `workspace/${SPAN}:since`]);
  });
});
