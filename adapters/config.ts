/**
 * The adapters' configuration schemas, apart from their implementations: the configuration
 * is read (and `mailgate --help` runs) without loading an IMAP client. src/config/schema.ts
 * builds `adapters:` from this list; adapters/index.ts holds the factories, one per kind here.
 * A new adapter kind is a folder, one line here (its schema) and one in adapters/index.ts.
 */
import type { z } from 'zod';
import { assembleCatalogue, type ErrorCatalogue, type ErrorDefs } from '../src/errors.js';
import { FILES_ERRORS } from './files/errors.js';
import { GMAIL_ERRORS } from './gmail/errors.js';
import { GRAPH_ERRORS } from './graph/errors.js';
import { IMAP_ERRORS } from './imap/errors.js';
import { SMTP_ERRORS } from './smtp/errors.js';
import { UPLOAD_ERRORS } from './upload/errors.js';
import { WEBHOOK_ERRORS } from './webhooks/errors.js';
import { filesEntrySchema } from './files/config.js';
import { duplicateEntry as duplicateGmailEntry, gmailEntrySchema } from './gmail/config.js';
import { duplicateEntry, graphEntrySchema } from './graph/config.js';
import { duplicateAccount, imapAccountSchema } from './imap/config.js';
import { uploadConfigSchema } from './upload/config.js';
import { webhookEntrySchema } from './webhooks/config.js';
import { recipientRoutes, smtpEntrySchema } from './smtp/config.js';

/**
 * The configuration side of a kind. Nothing here imports the pipeline: the configuration
 * layer reads it and sits below the pipeline.
 */
export interface AdapterConfigDefinition {
  /** `pull`: reads a source it owns; `push`: messages are handed to it (the Adapter contract's AdapterMode). */
  mode: 'pull' | 'push';
  /** The zod schema of one entry under `adapters.<kind>[]`. */
  schema: z.ZodType;
  /** Shown for `adapters.<kind>` in docs/config.md. */
  description: string;
  /** The kind's own error codes with their answers (adapters/<kind>/errors.ts); the core's are in src/errors.ts. */
  errors: ErrorDefs;
  /** A rule across the kind's entries (unique account names): the first offending entry, or undefined. */
  unique?(entries: ReadonlyArray<{ name: string }>): { index: number; message: string } | undefined;
  /** Routes an entry names besides `route` (SMTP recipients), each checked against the routes. The entry may be invalid. */
  routes?(entry: Record<string, unknown>): Array<{ path: Array<string | number>; route: unknown }>;
}

export const ADAPTER_CONFIGS = {
  files: {
    mode: 'pull',
    schema: filesEntrySchema,
    errors: FILES_ERRORS,
    description: 'File inputs: .eml, mbox, maildir, .msg and Outlook PST/OST files or folders, read once.',
  },
  imap: {
    mode: 'pull',
    schema: imapAccountSchema,
    errors: IMAP_ERRORS,
    description: 'IMAP accounts, one connection each; behaviour in docs/imap.md.',
    unique: duplicateAccount,
  },
  graph: {
    mode: 'pull',
    schema: graphEntrySchema,
    errors: GRAPH_ERRORS,
    description:
      'Microsoft 365 mailboxes through Microsoft Graph, one app registration per entry, each mailbox under its own lease; docs/graph.md.',
    unique: duplicateEntry,
  },
  gmail: {
    mode: 'pull',
    schema: gmailEntrySchema,
    description:
      'Google Workspace mailboxes through the Gmail API, a service account with domain-wide delegation (or one refresh token) per entry, each mailbox under its own lease; docs/gmail.md.',
    unique: duplicateGmailEntry,
    errors: GMAIL_ERRORS,
  },
  webhooks: {
    mode: 'push',
    schema: webhookEntrySchema,
    errors: WEBHOOK_ERRORS,
    description:
      'Mail-provider inbound webhooks (SendGrid, Mailgun, Postmark, SES via SNS, Mandrill, SparkPost, raw), one endpoint each; docs/webhooks.md.',
    unique: (entries) => duplicateName('webhooks', entries),
  },
  upload: {
    mode: 'push',
    schema: uploadConfigSchema,
    errors: UPLOAD_ERRORS,
    description: 'HTTP upload endpoints (POST /api/upload/<name>) behind their own keys; docs/upload.md.',
    unique: (entries) => duplicateName('upload', entries),
  },
  smtp: {
    mode: 'push',
    schema: smtpEntrySchema,
    errors: SMTP_ERRORS,
    description: 'SMTP and LMTP listeners: mail servers hand messages over, answered 250 once stored; behaviour in docs/smtp.md.',
    unique: (entries) => duplicateName('smtp', entries),
    routes: recipientRoutes,
  },
} as const satisfies Record<string, AdapterConfigDefinition>;

export type AdapterKind = keyof typeof ADAPTER_CONFIGS;
export const ADAPTER_KINDS = Object.keys(ADAPTER_CONFIGS) as AdapterKind[];

/** Every error code: the core's and each kind's, with their HTTP and SMTP answers (docs/errors.md). */
export function errorCatalogue(): ErrorCatalogue {
  return assembleCatalogue(ADAPTER_KINDS.map((kind) => ({ owner: `adapters/${kind}`, errors: ADAPTER_CONFIGS[kind].errors })));
}

/** The first entry of `adapters.<kind>` whose name an earlier entry already has. */
function duplicateName(kind: string, entries: ReadonlyArray<{ name: string }>): { index: number; message: string } | undefined {
  const seen = new Map<string, number>();
  for (const [index, e] of entries.entries()) {
    const first = seen.get(e.name);
    if (first !== undefined)
      return { index, message: `name "${e.name}" is already used by adapters.${kind}[${first}]; give each entry its own name` };
    seen.set(e.name, index);
  }
  return undefined;
}
