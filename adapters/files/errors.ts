/** The file kind's codes for archives (the core keeps the codes of inputs in general and of the readers in src/mime, PST/OST included). */
import { defineErrors, type CodesOf } from '../../src/errors.js';

export const FILES_ERRORS = defineErrors({
  MAILGATE_ERR_INPUT_VAULT_INVALID: { message: 'A Google Vault export (zip or metadata XML) could not be read.', http: 422 },
});

declare module '../../src/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this kind's codes to ErrorCode
  interface KindErrorCodes extends CodesOf<typeof FILES_ERRORS> {}
}
