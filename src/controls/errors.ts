/**
 * One vocabulary of mailbox failures across kinds: each adapter's coded errors map onto a kind
 * an operator can act on (the state a disabled mailbox shows, `mailgate mailboxes list`). A new
 * kind of mailbox adds its codes to the table; a code not listed is `other`.
 */

export const MAILBOX_ERROR_KINDS = [
  'not_found',
  'bad_credentials',
  'access_denied',
  'insufficient_scope',
  'quota',
  'unreachable',
  'other',
] as const;
export type MailboxErrorKind = (typeof MAILBOX_ERROR_KINDS)[number];

const KINDS: Readonly<Record<string, MailboxErrorKind>> = {
  MAILGATE_ERR_IMAP_AUTH: 'bad_credentials',
  MAILGATE_ERR_IMAP_OAUTH_TOKEN: 'bad_credentials',
  MAILGATE_ERR_IMAP_FOLDER_NOT_FOUND: 'not_found',
  MAILGATE_ERR_IMAP_CONNECTION: 'unreachable',
  MAILGATE_ERR_IMAP_UNAVAILABLE: 'unreachable',
  MAILGATE_ERR_IMAP_TIMEOUT: 'unreachable',
  MAILGATE_ERR_IMAP_THROTTLED: 'quota',
  MAILGATE_ERR_GRAPH_TOKEN: 'bad_credentials',
  MAILGATE_ERR_GRAPH_UNAUTHORIZED: 'bad_credentials',
  MAILGATE_ERR_GRAPH_FORBIDDEN: 'access_denied',
  MAILGATE_ERR_GRAPH_NOT_FOUND: 'not_found',
  MAILGATE_ERR_GRAPH_UNAVAILABLE: 'unreachable',
  MAILGATE_ERR_GRAPH_THROTTLED: 'quota',
  MAILGATE_ERR_GMAIL_TOKEN: 'bad_credentials',
  MAILGATE_ERR_GMAIL_UNAUTHORIZED: 'bad_credentials',
  MAILGATE_ERR_GMAIL_DELEGATION: 'insufficient_scope',
  MAILGATE_ERR_GMAIL_FORBIDDEN: 'access_denied',
  MAILGATE_ERR_GMAIL_NOT_FOUND: 'not_found',
  MAILGATE_ERR_GMAIL_UNAVAILABLE: 'unreachable',
  MAILGATE_ERR_GMAIL_RATE_LIMITED: 'quota',
};

/** The codes the table maps (a test checks each is in the error catalogue). */
export const MAPPED_CODES: readonly string[] = Object.keys(KINDS);

/** The kind of a mailbox failure from its MAILGATE_* code. */
export function mailboxErrorKind(code: string | undefined): MailboxErrorKind {
  return (code !== undefined ? KINDS[code] : undefined) ?? 'other';
}

/** Why a mailbox is disabled: by an operator, a quota no retry fixes now, or failures that lasted. */
export const DISABLE_REASONS = ['user', 'quota', 'sync_error'] as const;
export type DisableReason = (typeof DISABLE_REASONS)[number];
