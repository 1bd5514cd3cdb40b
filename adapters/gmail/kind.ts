/** The Gmail kind: Google Workspace mailboxes through the Gmail API (docs/gmail.md). */
import { defineKind } from '../../src/config/kind.js';
import { duplicateEntry, gmailEntrySchema } from './config.js';
import { GMAIL_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'gmail',
  mode: 'pull',
  schema: gmailEntrySchema,
  description:
    'Google Workspace mailboxes through the Gmail API, a service account with domain-wide delegation (or one refresh token) per entry, each mailbox under its own lease; docs/gmail.md.',
  errors: GMAIL_ERRORS,
  unique: duplicateEntry,
  load: () => import('./index.js'),
  standIn: () => import('./stand-in/offer.js'),
});
