/** The Microsoft Graph kind's codes. */
import { defineErrors, type CodesOf } from '../../src/errors.js';

export const GRAPH_ERRORS = defineErrors({
  MAILGATE_ERR_GRAPH_TOKEN: {
    message:
      'The Microsoft identity platform refused or failed to issue an access token (tenant, client id, secret or certificate); the mailbox retries with backoff.',
  },
  MAILGATE_ERR_GRAPH_UNAUTHORIZED: { message: 'Graph answered 401 again after one token renewal; the mailbox retries with backoff.' },
  MAILGATE_ERR_GRAPH_FORBIDDEN: {
    message:
      'Graph answered 403: the app lacks Mail.Read (Mail.ReadWrite for actions) or an application access policy excludes the mailbox; retried with backoff.',
  },
  MAILGATE_ERR_GRAPH_NOT_FOUND: {
    message: 'Graph answered 404: the mailbox or folder does not exist, or the mailbox is not enabled for REST; retried with backoff.',
  },
  MAILGATE_ERR_GRAPH_THROTTLED: { message: 'Graph answered 429, 503 or 504; the mailbox waits its Retry-After before any other request.' },
  MAILGATE_ERR_GRAPH_UNAVAILABLE: { message: 'Graph could not be reached, timed out or answered another 5xx; retried with backoff.' },
  MAILGATE_ERR_GRAPH_RESPONSE: { message: 'Graph answered with an unexpected status or a body mailgate cannot read.' },
  MAILGATE_ERR_GRAPH_SYNC_RESET: {
    message:
      "A folder's delta link expired (410 or syncStateNotFound): the folder is read again in full; deterministic comment ids and the ledger keep it free.",
  },
  MAILGATE_ERR_GRAPH_SUBSCRIPTION: {
    message: 'A change-notification subscription could not be created or renewed; the folder is still read every poll_interval_ms.',
  },
  MAILGATE_ERR_GRAPH_MOVE_FOLDER: {
    message:
      'The folder of after_delivery move: does not exist in the mailbox: the messages stay where they are and their actions are finished, not retried (create the folder or change the action; later messages look it up again).',
  },
  MAILGATE_ERR_GRAPH_NOTIFICATION: { message: 'A change notification was refused: its clientState is not the configured one.' },
});

declare module '../../src/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this kind's codes to ErrorCode
  interface KindErrorCodes extends CodesOf<typeof GRAPH_ERRORS> {}
}
