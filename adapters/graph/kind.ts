/** The Microsoft Graph kind: Microsoft 365 mailboxes read with one app registration (docs/graph.md). */
import { detailLines, detailText } from '../../src/model/origin.js';
import { defineKind, uniqueMailboxEntries } from '../../src/config/kind.js';
import { GRAPH_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'graph',
  mode: 'pull',
  schema: async () => (await import('./config.js')).graphEntrySchema,
  description:
    'Microsoft 365 mailboxes through Microsoft Graph, one app registration per entry, each mailbox under its own lease; docs/graph.md.',
  errors: GRAPH_ERRORS,
  unique: uniqueMailboxEntries('graph'),
  // Details: mailbox, folder, eventId (the immutable id), internetMessageId (sync.ts).
  showOrigin: (d) => ({
    summary: detailText(d['folder']) ?? '',
    lines: detailLines(d, [
      ['mailbox', 'Mailbox'],
      ['folder', 'Folder'],
      ['internetMessageId', 'Message-ID'],
    ]),
  }),
  load: () => import('./index.js'),
  standIn: () => import('./stand-in/offer.js'),
});
