/** The IMAP kind: one connection per account, IDLE with a polling fallback (docs/imap.md). */
import { defineKind } from '../../src/config/kind.js';
import { duplicateAccount, imapAccountSchema } from './config.js';
import { IMAP_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'imap',
  mode: 'pull',
  schema: imapAccountSchema,
  description: 'IMAP accounts, one connection each; behaviour in docs/imap.md.',
  errors: IMAP_ERRORS,
  unique: duplicateAccount,
  health: {
    metric: 'mailgate_imap_connection_state',
    help: 'Current connection state of each IMAP account (1 = current).',
    instanceLabel: 'account',
    // ImapState (health.ts); any other state is reported too once seen.
    states: ['connecting', 'idle', 'syncing', 'backoff', 'auth_failed', 'stopped'],
  },
  load: () => import('./index.js'),
});
