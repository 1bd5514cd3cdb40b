/** The Gmail kind: Google Workspace mailboxes through the Gmail API (docs/gmail.md). */
import { detailLines, detailText } from '../../src/model/origin.js';
import { defineKind, uniqueMailboxEntries } from '../../src/config/kind.js';
import { GMAIL_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'gmail',
  mode: 'pull',
  schema: async () => (await import('./config.js')).gmailEntrySchema,
  description:
    'Google Workspace mailboxes through the Gmail API, a service account with domain-wide delegation (or one refresh token) per entry, each mailbox under its own lease; docs/gmail.md.',
  errors: GMAIL_ERRORS,
  unique: uniqueMailboxEntries('gmail'),
  // Details: mailbox, labels, eventId (the Gmail id), threadId, internetMessageId (sync.ts).
  showOrigin: (d) => ({
    summary: detailText(d['labels']) ?? '',
    lines: detailLines(d, [
      ['mailbox', 'Mailbox'],
      ['labels', 'Labels'],
      ['threadId', 'Thread'],
      ['internetMessageId', 'Message-ID'],
    ]),
  }),
  load: () => import('./index.js'),
  standIn: () => import('./stand-in/offer.js'),
});
