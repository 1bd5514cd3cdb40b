/**
 * The adapters' configuration schemas, apart from their implementations: the configuration
 * is read (and `mailgate --help` runs) without loading an IMAP client. adapters/index.ts
 * holds the factories, one per kind listed here.
 */
export const ADAPTER_KINDS = ['files', 'imap'] as const;

export type AdapterKind = (typeof ADAPTER_KINDS)[number];

/** The schema of one IMAP account, embedded in the configuration as `adapters.imap[]`. */
export { duplicateAccount, imapAccountSchema } from './imap/config.js';
