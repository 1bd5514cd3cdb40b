/** The SMTP/LMTP kind: mail servers hand messages over, answered 250 once stored (docs/smtp.md). */
import { defineKind, uniqueNames } from '../../src/config/kind.js';
import { recipientRoutes, smtpEntrySchema } from './config.js';
import { SMTP_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'smtp',
  mode: 'push',
  schema: smtpEntrySchema,
  description: 'SMTP and LMTP listeners: mail servers hand messages over, answered 250 once stored; behaviour in docs/smtp.md.',
  errors: SMTP_ERRORS,
  unique: uniqueNames('smtp'),
  routes: recipientRoutes,
  // No details: what an SMTP client states is the envelope, shown beside.
  showOrigin: () => ({ summary: '', lines: [] }),
  load: () => import('./index.js'),
});
