/**
 * The adapters' configuration schemas, apart from their implementations: the configuration
 * is read (and `mailgate --help` runs) without loading an IMAP client. src/config/schema.ts
 * builds `adapters:` from this list; adapters/index.ts holds the factories, one per kind here.
 * A new adapter kind is a folder, one line here (its schema) and one in adapters/index.ts.
 */
import type { AdapterConfigDefinition } from '../src/pipeline/types.js';
import { filesEntrySchema } from './files/config.js';
import { duplicateAccount, imapAccountSchema } from './imap/config.js';

export const ADAPTER_CONFIGS = {
  files: { mode: 'pull', schema: filesEntrySchema, description: 'File inputs: .eml, mbox, maildir and .msg files or folders, read once.' },
  imap: { mode: 'pull', schema: imapAccountSchema, description: 'IMAP accounts, one connection each; behaviour in docs/imap.md.', unique: duplicateAccount },
} as const satisfies Record<string, AdapterConfigDefinition>;

export type AdapterKind = keyof typeof ADAPTER_CONFIGS;
export const ADAPTER_KINDS = Object.keys(ADAPTER_CONFIGS) as AdapterKind[];
