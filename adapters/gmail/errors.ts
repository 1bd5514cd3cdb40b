/** The Gmail kind's codes. */
import { defineErrors, type CodesOf } from '../../src/errors.js';

export const GMAIL_ERRORS = defineErrors({
  MAILGATE_ERR_GMAIL_DELEGATION: {
    message:
      'The token endpoint answered unauthorized_client: domain-wide delegation is not granted to the service account for this scope; the mailbox retries with backoff.',
  },
  MAILGATE_ERR_GMAIL_TOKEN: {
    message:
      'The token endpoint refused or failed to issue an access token (key file, client id, secret or refresh token); the mailbox retries with backoff.',
  },
  MAILGATE_ERR_GMAIL_UNAUTHORIZED: { message: 'Gmail answered 401 again after one token renewal; the mailbox retries with backoff.' },
  MAILGATE_ERR_GMAIL_FORBIDDEN: {
    message:
      'Gmail answered 403 (not a rate limit: the API is not enabled for the project, or the scope is missing) or 400 failedPrecondition (Gmail is not enabled for the user); retried with backoff.',
  },
  MAILGATE_ERR_GMAIL_NOT_FOUND: { message: 'Gmail answered 404: the user or a configured label does not exist; retried with backoff.' },
  MAILGATE_ERR_GMAIL_RATE_LIMITED: {
    message:
      'Gmail answered 429 or 403 rateLimitExceeded/userRateLimitExceeded; the mailbox backs off with jitter before any other request.',
  },
  MAILGATE_ERR_GMAIL_UNAVAILABLE: { message: 'Gmail could not be reached, timed out or answered 5xx; retried with backoff.' },
  MAILGATE_ERR_GMAIL_RESPONSE: { message: 'Gmail answered with an unexpected status or a body mailgate cannot read.' },
  MAILGATE_ERR_GMAIL_HISTORY_RESET: {
    message:
      "A mailbox's historyId expired (404 from history.list): its labels are listed again since the last checkpoint's date; deterministic comment ids and the ledger keep it free.",
  },
  MAILGATE_ERR_GMAIL_WATCH: { message: 'users.watch could not be started or renewed; the mailbox is still read every poll_interval_ms.' },
  MAILGATE_ERR_GMAIL_PUSH: {
    message:
      'A Pub/Sub push was refused: no bearer token, a bad signature, another audience or service account, or an expired token. Nothing is fetched because of it.',
    http: 401,
  },
});

declare module '../../src/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this kind's codes to ErrorCode
  interface KindErrorCodes extends CodesOf<typeof GMAIL_ERRORS> {}
}
