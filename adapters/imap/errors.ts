/** The IMAP kind's codes. */
import { defineErrors, type CodesOf } from '../../src/errors.js';

export const IMAP_ERRORS = defineErrors({
  MAILGATE_ERR_IMAP_AUTH: { message: 'The IMAP server refused the credentials (password or OAuth2 access token).' },
  MAILGATE_ERR_IMAP_OAUTH_TOKEN: { message: 'The OAuth2 token endpoint refused or failed to issue an access token.' },
  MAILGATE_ERR_IMAP_CONNECTION: { message: 'The IMAP connection failed or closed (retried with backoff).' },
  MAILGATE_ERR_IMAP_TIMEOUT: { message: 'An IMAP operation exceeded its deadline; the connection was dropped and is retried.' },
  MAILGATE_ERR_IMAP_THROTTLED: {
    message: 'The IMAP server asked the client to slow down (THROTTLED, LIMIT, too many connections); waited out.',
  },
  MAILGATE_ERR_IMAP_FOLDER_NOT_FOUND: { message: 'A configured folder does not exist on the server (retried at the next resync).' },
  MAILGATE_ERR_IMAP_COMMAND: { message: 'The IMAP server answered a command with NO or BAD.' },
  MAILGATE_ERR_IMAP_UNAVAILABLE: { message: 'An after-delivery action could not run: the account has no usable connection (retry later).' },
});

declare module '../../src/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this kind's codes to ErrorCode
  interface KindErrorCodes extends CodesOf<typeof IMAP_ERRORS> {}
}
