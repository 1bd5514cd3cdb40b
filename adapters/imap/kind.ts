/** The IMAP kind: one connection per account, IDLE with a polling fallback (docs/imap.md). */
import { detailLines, detailText } from '../../src/model/origin.js';
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
  // Details: folder, uidValidity, uid (identity.ts).
  showOrigin: (d) => ({
    summary: [detailText(d['folder']), d['uid'] === undefined ? undefined : `uid ${detailText(d['uid'])}`].filter(Boolean).join(' '),
    lines: detailLines(d, [
      ['folder', 'Folder'],
      ['uidValidity', 'UIDVALIDITY'],
      ['uid', 'UID'],
    ]),
  }),
  load: () => import('./index.js'),
});
