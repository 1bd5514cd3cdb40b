/** The IMAP kind: one connection per account, IDLE with a polling fallback (docs/imap.md). */
import { detailLines, detailText } from '../../src/model/origin.js';
import { defineKind } from '../../src/config/kind.js';
import { IMAP_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'imap',
  mode: 'pull',
  schema: async () => (await import('./config.js')).imapAccountSchema,
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

/** The first account whose name an earlier one already uses (names key checkpoints, logs and metrics). */
export function duplicateAccount(accounts: ReadonlyArray<{ name: string }>): { index: number; message: string } | undefined {
  const seen = new Map<string, number>();
  for (const [index, a] of accounts.entries()) {
    const first = seen.get(a.name);
    if (first !== undefined)
      return { index, message: `account name "${a.name}" is already used by adapters.imap[${first}]; give each account its own name` };
    seen.set(a.name, index);
  }
  return undefined;
}
