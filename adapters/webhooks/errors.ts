/** The webhook endpoints' codes. `http` is the answer most providers understand; a provider whose retry contract differs declares its own statuses (its `refusalStatus`, webhooks/provider.ts). */
import { defineErrors, type CodesOf } from '../../src/errors.js';

export const WEBHOOK_ERRORS = defineErrors({
  MAILGATE_ERR_WEBHOOK_UNSIGNED: {
    message: 'The request carries no signature, token or credentials where the endpoint requires them; nothing was stored.',
    http: 401,
  },
  MAILGATE_ERR_WEBHOOK_FORGED: {
    message: "The request's signature, token or credentials do not match the configured secret; nothing was stored.",
    http: 403,
  },
  MAILGATE_ERR_WEBHOOK_REPLAYED: {
    message: "The request's timestamp lies outside the allowed window, or its token was seen before; nothing was stored.",
    http: 403,
  },
  MAILGATE_ERR_WEBHOOK_MALFORMED: {
    message: "The request is not the provider's payload shape (missing field, undecodable body, truncated multipart); nothing was stored.",
    http: 400,
  },
  MAILGATE_ERR_WEBHOOK_TOO_LARGE: {
    message: "The request body or one of its fields exceeds the endpoint's limit (answered 413); nothing was stored.",
    http: 413,
  },
  MAILGATE_ERR_WEBHOOK_UNSUPPORTED: {
    message:
      'The payload is genuine but of a kind the endpoint does not take (e.g. an SNS topic not configured, Mailgun store() notifications, SES content in S3 without S3 configured).',
    http: 422,
  },
  MAILGATE_ERR_WEBHOOK_CERTIFICATE: {
    message:
      'The SNS signing certificate could not be fetched or is not from an sns.<region>.amazonaws.com https URL (answered 5xx when the failure may pass).',
  },
});

declare module '../../src/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this kind's codes to ErrorCode
  interface KindErrorCodes extends CodesOf<typeof WEBHOOK_ERRORS> {}
}
