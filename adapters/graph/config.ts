/**
 * Configuration of one Microsoft 365 tenant connection (`adapters.graph[]`): the app
 * registration (tenant, client, secret or certificate), the mailboxes and their folders, and how
 * they are read. docs/graph.md describes every field.
 */
import { z } from 'zod';
import { endpointUrl, mailboxEntryFields } from '../../src/config/mailbox-entry.js';
import { controlFields } from '../../src/controls/schema.js';
import { insecureUrlIssue } from '../../src/net.js';

const url = (what: string, dflt: string) => endpointUrl(`${what}. Default ${dflt}`).default(dflt);

const auth = z.union(
  [
    z
      .strictObject({ client_secret: z.string().min(1).describe('Client secret of the app registration (use ${ENV} interpolation).') })
      .describe('Client secret.'),
    z
      .strictObject({
        certificate: z.string().min(1).describe('PEM file holding the private key and the certificate uploaded to the app registration.'),
      })
      .describe('Certificate credential.'),
  ],
  { error: 'use { client_secret } or { certificate: <PEM file with key and certificate> } (docs/graph.md)' },
);

/** Well-known folder names Graph resolves in every mailbox language. */
export const WELL_KNOWN_FOLDERS = [
  'inbox',
  'sentitems',
  'archive',
  'deleteditems',
  'drafts',
  'junkemail',
  'outbox',
  'msgfolderroot',
  'clutter',
  'conversationhistory',
  'recoverableitemsdeletions',
  'scheduled',
  'searchfolders',
  'serverfailures',
  'syncissues',
] as const;

const folder = z
  .string()
  .min(1)
  .refine((f) => WELL_KNOWN_FOLDERS.includes(f.split('/')[0]!.toLowerCase() as (typeof WELL_KNOWN_FOLDERS)[number]), {
    message: `a folder is a well-known name (${WELL_KNOWN_FOLDERS.slice(0, 6).join(', ')}, …) or a path below one, e.g. inbox/Support`,
  });

const mailbox = z.strictObject({
  user: z.string().min(1).describe('Mailbox: user principal name, address or object id (shared mailboxes the same).'),
  folders: z
    .array(folder)
    .min(1)
    .default(['inbox'])
    .describe('Folders to read: well-known names (inbox, sentitems, archive, …) or paths below one (inbox/Support). Default [inbox].'),
  ...controlFields('folders'),
});

const afterDelivery = z
  .string()
  .regex(/^(none|read|category:.+|move:.+)$/, 'use none, read, category:<name> or move:<folder>')
  .default('none')
  .describe('What to do to a message once the API accepted it: none, read, category:<name>, move:<folder>. Default none.');

export const graphEntrySchema = z.strictObject({
  ...mailboxEntryFields({
    provider: 'Graph',
    round: 'A delta round of every folder',
    notice: 'a notification',
    remoteNotice: 'a change notification',
  }),
  tenant_id: z.string().min(1).describe('Directory (tenant) id of the Microsoft 365 organisation.'),
  client_id: z.string().min(1).describe('Application (client) id of the app registration.'),
  auth: auth.describe('{ client_secret } or { certificate: PEM file with key and certificate }.'),
  authority_url: url('The Microsoft identity platform (sovereign clouds have their own)', 'https://login.microsoftonline.com'),
  graph_url: url('The Graph endpoint with its version (e.g. https://graph.microsoft.us/v1.0)', 'https://graph.microsoft.com/v1.0'),
  mailboxes: z.array(mailbox).min(1).describe('Mailboxes to read, each under its own lease.'),
  after_delivery: afterDelivery,
  notifications: z
    .strictObject({
      url: z
        .string()
        .url()
        .superRefine((u, ctx) => {
          const issue = insecureUrlIssue(u, false);
          if (issue) ctx.addIssue({ code: 'custom', message: issue });
        })
        .describe('Public https URL at which Graph reaches this gateway; its path is served by mailgate (the notification receiver).'),
      client_state: z
        .string()
        .min(16)
        .max(128)
        .describe('Secret Graph sends back with every notification (16-128 characters); others are refused.'),
    })
    .optional()
    .describe('Change notifications as wake-ups (one subscription per folder). Without them, polling only.'),
  page_size: z.number().int().min(1).max(1000).default(100).describe('Messages per delta page (odata.maxpagesize). Default 100.'),
  max_in_flight: z
    .number()
    .int()
    .min(1)
    .max(4)
    .default(4)
    .describe('Requests in flight per mailbox, each request of a $batch counted (Graph allows 4). Default 4.'),
  max_requests_per_10_min: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(10_000)
    .describe('Requests per mailbox in any 10 minutes, each request of a $batch counted (Graph allows 10000). Default 10000.'),
  subscription_minutes: z
    .number()
    .int()
    .min(45)
    .max(10_080)
    .default(4_230)
    .describe('Lifetime asked for each subscription, in minutes (Outlook allows up to 10080); renewed when a third is left. Default 4230.'),
});

export type GraphEntry = z.output<typeof graphEntrySchema>;
export type GraphMailboxConfig = GraphEntry['mailboxes'][number];

export type AfterDeliveryAction =
  | { kind: 'none' }
  | { kind: 'read' }
  | { kind: 'category'; name: string }
  | { kind: 'move'; folder: string };

export function parseAction(s: string): AfterDeliveryAction {
  if (s === 'read') return { kind: 'read' };
  if (s.startsWith('category:')) return { kind: 'category', name: s.slice('category:'.length) };
  if (s.startsWith('move:')) return { kind: 'move', folder: s.slice('move:'.length) };
  return { kind: 'none' };
}
