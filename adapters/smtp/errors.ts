/** The SMTP/LMTP listeners' codes. */
import { defineErrors, type CodesOf } from '../../src/errors.js';

export const SMTP_ERRORS = defineErrors({
  MAILGATE_ERR_SMTP_LISTEN: {
    message:
      'An SMTP/LMTP listener cannot listen on its address (port in use or not allowed): set adapters.smtp[].listen to another host:port.',
  },
  MAILGATE_ERR_SMTP_TLS: {
    message: 'The TLS key or certificate of an SMTP/LMTP listener cannot be read (adapters.smtp[].tls.key and cert).',
  },
});

declare module '../../src/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this kind's codes to ErrorCode
  interface KindErrorCodes extends CodesOf<typeof SMTP_ERRORS> {}
}
