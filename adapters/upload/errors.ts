/** The upload endpoints' codes, each with the status it is answered with. */
import { defineErrors, type CodesOf } from '../../src/errors.js';

export const UPLOAD_ERRORS = defineErrors({
  MAILGATE_ERR_UPLOAD_UNAUTHORIZED: { message: 'The upload request carries no valid key for that upload adapter.', http: 401 },
  MAILGATE_ERR_UPLOAD_BAD_REQUEST: {
    message: "The upload's Content-Type, multipart structure or file list is unusable; nothing was stored.",
    http: 400,
  },
  MAILGATE_ERR_UPLOAD_TOO_LARGE: {
    message: "The upload body or one of its files exceeds the adapter's limit (413); nothing was stored.",
    http: 413,
  },
  MAILGATE_ERR_UPLOAD_SPOOL_FULL: {
    message:
      "The spool folder has no room for the uploaded PST/OST: its declared length exceeds the folder's free space, or the disk filled while it was written (503 with Retry-After); nothing was stored.",
    http: 503,
  },
  MAILGATE_ERR_UPLOAD_IDEMPOTENCY_CONFLICT: { message: 'The Idempotency-Key was used before with different content (422).', http: 422 },
});

declare module '../../src/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this kind's codes to ErrorCode
  interface KindErrorCodes extends CodesOf<typeof UPLOAD_ERRORS> {}
}
