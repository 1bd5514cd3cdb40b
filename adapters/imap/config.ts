/**
 * Configuration of one IMAP account. The service's configuration file embeds this schema
 * under `adapters.imap[]`; the adapter validates it again when it is built directly.
 */
import { z } from 'zod';
import { GatewayError } from '../../src/errors.js';
import { controlFields } from '../../src/controls/schema.js';
import { insecureUrlIssue } from '../../src/net.js';

const positiveMs = (what: string, dflt: number) =>
  z.number().int().min(1000).default(dflt).describe(`${what}, in milliseconds (at least 1000). Default ${dflt}.`);

const passwordAuth = z
  .object({
    user: z.string().min(1).describe('Login name.'),
    pass: z.string().min(1).describe('Password (use ${ENV} interpolation, never a literal in the file).'),
  })
  .strict();

const tokenAuth = z
  .object({
    user: z.string().min(1).describe('Login name (the mailbox address).'),
    accessToken: z.string().min(1).describe('A fixed OAuth2 access token (for tests; it expires, prefer `oauth2`).'),
  })
  .strict();

const oauth2Auth = z
  .object({
    user: z.string().min(1).describe('Login name (the mailbox address).'),
    oauth2: z
      .object({
        tokenUrl: z.string().url().describe('Token endpoint, e.g. https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token.'),
        clientId: z.string().min(1).describe('OAuth2 client (application) id.'),
        clientSecret: z.string().min(1).optional().describe('Client secret (confidential clients; required for client_credentials).'),
        refreshToken: z.string().min(1).optional().describe('Refresh token (required for the refresh_token grant).'),
        scope: z.string().min(1).optional().describe('Space-separated scopes sent with the token request.'),
        grant: z.enum(['refresh_token', 'client_credentials']).describe('Which grant obtains access tokens.'),
        allow_insecure_http: z
          .boolean()
          .default(false)
          .describe(
            'Accept an http:// tokenUrl for a host that is not loopback ' +
              '(client secret and tokens then cross the network in clear). Default false.',
          ),
      })
      .strict()
      .superRefine((o, ctx) => {
        const issue = insecureUrlIssue(o.tokenUrl, o.allow_insecure_http);
        if (issue) ctx.addIssue({ code: 'custom', path: ['tokenUrl'], message: issue });
        if (o.grant === 'refresh_token' && o.refreshToken === undefined) {
          ctx.addIssue({ code: 'custom', path: ['refreshToken'], message: 'the refresh_token grant needs refreshToken' });
        }
        if (o.grant === 'client_credentials' && o.clientSecret === undefined) {
          ctx.addIssue({ code: 'custom', path: ['clientSecret'], message: 'the client_credentials grant needs clientSecret' });
        }
      }),
  })
  .strict();

const afterDelivery = z
  .string()
  .regex(/^(none|seen|flag:[^\s()\]{%*"\\]+|move:.+)$/, 'use none, seen, flag:<keyword> or move:<folder>')
  .default('none')
  .describe('What to do to a message once the API accepted it: none, seen, flag:<keyword>, move:<folder>. Default none.');

const AUTH_FORMS =
  'use one of { user, pass }, { user, accessToken } or { user, oauth2: { tokenUrl, clientId, grant, clientSecret?, refreshToken?, scope? } } (docs/imap.md)';

/** An unknown field of an account names itself and where the fields are listed. */
const unknownField = (iss: { code?: string; keys?: string[] }): string | undefined =>
  iss.code === 'unrecognized_keys'
    ? `unknown field ${(iss.keys ?? []).map((k) => `"${k}"`).join(', ')} in an IMAP account; the fields are listed in docs/imap.md`
    : undefined;

export const imapAccountSchema = z.strictObject(
  {
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, . _ - (1-64)')
      .describe('Account name: part of checkpoint keys, logs and metrics.'),
    route: z.string().min(1).describe('Route the messages of this account belong to.'),
    host: z.string().min(1).describe('IMAP server host name.'),
    port: z.number().int().min(1).max(65535).default(993).describe('IMAP port. Default 993.'),
    secure: z
      .boolean()
      .default(true)
      .describe(
        'TLS from the first byte (993). false: STARTTLS, required for a host that is not loopback (see allow_plaintext). Default true.',
      ),
    allow_plaintext: z
      .boolean()
      .default(false)
      .describe(
        'With secure: false, let the login go in clear when the server offers no STARTTLS (anyone on the path can strip it). ' +
          'Loopback hosts always may. Default false: a non-loopback server without STARTTLS is refused.',
      ),
    auth: z
      .union([passwordAuth, tokenAuth, oauth2Auth], { error: AUTH_FORMS })
      .describe('Password, fixed access token, or an OAuth2 token provider.'),
    folders: z
      .array(z.string().min(1))
      .min(1)
      .default(['INBOX'])
      .describe(
        "Folders to read: names, special-use flags like '\\\\Inbox' or '\\\\Sent', or ['*'] for every selectable folder. Default [INBOX].",
      ),
    ...controlFields('folders'),
    after_delivery: afterDelivery,
    idle: z.boolean().default(true).describe('Use IMAP IDLE on the first folder when the server supports it. Default true.'),
    poll_interval_ms: positiveMs('How often folders are polled when IDLE is off or unsupported', 60_000),
    resync_interval_ms: positiveMs('How often folders other than the idling one are re-synced', 300_000),
    idle_watchdog_ms: positiveMs('While idling, how often a NOOP proves the connection alive (and the idle folder is re-checked)', 120_000),
    command_timeout_ms: positiveMs('Deadline of one IMAP operation (connect, one fetch chunk, one action)', 300_000),
    batch_size: z
      .number()
      .int()
      .min(1)
      .max(5000)
      .default(100)
      .describe('Messages per fetch chunk and per sink batch (1-5000). Default 100.'),
    batch_bytes: z
      .number()
      .int()
      .min(65_536)
      .default(32 * 1024 * 1024)
      .describe('Upper bound of fetched bytes per chunk (message sizes as the server reports them). Default 33554432.'),
  },
  { error: unknownField },
);

export type ImapAccountInput = z.input<typeof imapAccountSchema>;
export type ImapAccountConfig = z.output<typeof imapAccountSchema>;
export type ImapAuth = ImapAccountConfig['auth'];
export type OAuth2Settings = Extract<ImapAuth, { oauth2: unknown }>['oauth2'];

export type AfterDeliveryAction =
  | { kind: 'none' }
  | { kind: 'seen' }
  | { kind: 'flag'; keyword: string }
  | { kind: 'move'; folder: string };

export function parseAfterDelivery(value: string): AfterDeliveryAction {
  if (value === 'none' || value === 'seen') return { kind: value };
  if (value.startsWith('flag:')) return { kind: 'flag', keyword: value.slice(5) };
  if (value.startsWith('move:')) return { kind: 'move', folder: value.slice(5) };
  throw new GatewayError(
    'MAILGATE_ERR_CONFIG_INVALID',
    `after_delivery: unknown action "${value}"; use none, seen, flag:<keyword> or move:<folder>`,
  );
}

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
}

/** Validates one account (entry `index` of adapters.imap) and fills defaults; errors name the path and the fix. */
export function parseImapAccount(input: unknown, index = 0): ImapAccountConfig {
  const res = imapAccountSchema.safeParse(input);
  if (res.success) return Object.freeze(res.data);
  const issues = res.error.issues.map((i) => `adapters.imap${formatPath([index, ...i.path])}: ${i.message}`);
  throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `invalid IMAP account: ${issues.join('; ')}`, { details: { issues } });
}
