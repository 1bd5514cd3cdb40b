/**
 * Configuration of one Google Workspace connection (`adapters.gmail[]`): the credential (a
 * service account with domain-wide delegation, or one user's refresh token), the mailboxes and
 * their labels, the quota held per user, and the optional Pub/Sub wake-ups. docs/gmail.md
 * describes every field.
 */
import { z } from 'zod';
import { endpointUrl as safeUrl, mailboxEntryFields } from '../../src/config/mailbox-entry.js';
import { controlFields } from '../../src/controls/schema.js';

export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const GOOGLE_CERTS_URL = 'https://www.googleapis.com/oauth2/v1/certs';

const auth = z.union(
  [
    z
      .strictObject({
        service_account: z
          .string()
          .min(1)
          .describe("The service account's JSON key file (client_email, private_key, token_uri); it impersonates each mailbox's user."),
      })
      .describe('Service account with domain-wide delegation.'),
    z
      .strictObject({
        client_id: z.string().min(1).describe('OAuth client id of the consenting user.'),
        client_secret: z.string().min(1).describe('OAuth client secret (use ${ENV} interpolation).'),
        refresh_token: z.string().min(1).describe('Refresh token the user granted (use ${ENV} interpolation).'),
        token_url: safeUrl('Token endpoint of the refresh-token grant. Default https://oauth2.googleapis.com/token').default(
          GOOGLE_TOKEN_URL,
        ),
      })
      .describe('One consenting user (its refresh token).'),
  ],
  { error: 'use { service_account: <key file> } or { client_id, client_secret, refresh_token } (docs/gmail.md)' },
);

const mailbox = z.strictObject({
  user: z.string().min(1).describe('Mailbox address (the user impersonated; `me` for the refresh-token form).'),
  labels: z
    .array(z.string().min(1))
    .min(1)
    .default(['INBOX'])
    .describe('Labels to read: ids (INBOX, Label_12) or names (Support/Tier 2). Default [INBOX].'),
  ...controlFields('labels'),
});

const afterDelivery = z
  .string()
  .regex(/^(none|read|archive|label:.+)$/, 'use none, read, label:<name> or archive')
  .default('none')
  .describe(
    'What to do to a message once the API accepted it: none, read (remove UNREAD), label:<name> (add it), archive (remove INBOX). Default none.',
  );

export const gmailEntrySchema = z.strictObject({
  ...mailboxEntryFields({
    provider: 'Gmail',
    round: 'A history round of every mailbox',
    notice: 'a push',
    remoteNotice: 'a push',
  }),
  auth: auth.describe('{ service_account: key file } (domain-wide delegation) or { client_id, client_secret, refresh_token }.'),
  api_url: safeUrl('The Gmail API endpoint. Default https://gmail.googleapis.com').default('https://gmail.googleapis.com'),
  mailboxes: z.array(mailbox).min(1).describe('Mailboxes to read, each under its own lease.'),
  after_delivery: afterDelivery,
  notifications: z
    .strictObject({
      topic: z
        .string()
        .regex(/^projects\/[^/]+\/topics\/[^/]+$/, 'projects/<project>/topics/<topic>')
        .describe('Pub/Sub topic users.watch publishes into (Gmail must be allowed to publish to it).'),
      path: z
        .string()
        .regex(/^\/[A-Za-z0-9/._-]*$/, 'an absolute path')
        .optional()
        .describe("Path of mailgate's push endpoint the subscription posts to. Default /gmail/<name>/push."),
      audience: z.string().min(1).describe("Audience the push subscription's OIDC token names (set on the subscription)."),
      service_account: z
        .string()
        .min(3)
        .describe('Service account email the push subscription authenticates as; other tokens are refused.'),
      certs_url: safeUrl("Where Google's token signing certificates are read. Default https://www.googleapis.com/oauth2/v1/certs").default(
        GOOGLE_CERTS_URL,
      ),
    })
    .optional()
    .describe('users.watch + Pub/Sub push as wake-ups. Without it, polling only.'),
  watch_renew_ms: z
    .number()
    .int()
    .min(60_000)
    .max(7 * 86_400_000)
    .default(86_400_000)
    .describe('How often users.watch is renewed (a watch expires after 7 days), in ms. Default 86400000 (daily).'),
  page_size: z.number().int().min(1).max(500).default(500).describe('Messages per messages.list page (maxResults). Default 500.'),
  batch_size: z.number().int().min(1).max(50).default(50).describe('Calls per batch request (Gmail advises at most 50). Default 50.'),
  full_format_over_bytes: z
    .number()
    .int()
    .min(0)
    .default(100_000)
    .describe(
      'A message larger than this with attachments is read with format=full, attachment bodies left on the server, instead of format=raw. Default 100000.',
    ),
  quota_units_per_second: z
    .number()
    .int()
    .min(1)
    .max(250)
    .default(250)
    .describe('Quota units per user per second, a moving average (Google allows 250). Default 250.'),
  quota_units_per_minute: z
    .number()
    .int()
    .min(1)
    .max(15_000)
    .default(15_000)
    .describe('Quota units per user in any minute (Google allows 15000). Default 15000.'),
});

export type GmailEntry = z.output<typeof gmailEntrySchema>;
export type GmailMailboxConfig = GmailEntry['mailboxes'][number];

export type AfterDeliveryAction = { kind: 'none' } | { kind: 'read' } | { kind: 'archive' } | { kind: 'label'; name: string };

export function parseAction(s: string): AfterDeliveryAction {
  if (s === 'read') return { kind: 'read' };
  if (s === 'archive') return { kind: 'archive' };
  if (s.startsWith('label:')) return { kind: 'label', name: s.slice('label:'.length) };
  return { kind: 'none' };
}
