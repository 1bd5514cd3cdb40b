/**
 * Configuration of one SMTP or LMTP listener (`adapters.smtp[]`): mail servers hand messages
 * to it (a Postfix/Exim transport, a forwarded address, an Exchange journal). Kept apart from
 * the server so that the configuration loads without smtp-server. Behaviour in docs/smtp.md.
 */
import { z } from 'zod';
import { isLoopbackHost } from '../../src/net.js';

const MIB = 1024 * 1024;
export const SMTP_DEFAULT_MAX_MESSAGE_BYTES = 25 * MIB;
export const SMTP_DEFAULT_MAX_CONNECTIONS = 100;
export const SMTP_DEFAULT_MAX_RECIPIENTS = 100;
export const SMTP_DEFAULT_SOCKET_TIMEOUT_MS = 60_000;
export const SMTP_DEFAULT_CLOSE_TIMEOUT_MS = 30_000;
export const SMTP_DEFAULT_AUTHENTICATE_TIMEOUT_MS = 10_000;
export const SMTP_DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 10;
export const SMTP_DEFAULT_DATA_TIMEOUT_MS = 300_000;
export const SMTP_DEFAULT_SESSION_TIMEOUT_MS = 1_800_000;

/** `host:port` with an IPv4 address, a name or a bracketed IPv6 address; port 0 picks a free one. */
const LISTEN_RE = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/** `a.b.c.d/n`, `x:y::z/n`, or a bare address (one host). */
const CIDR_RE = /^([0-9.]+|[0-9a-fA-F:.]+)(\/\d{1,3})?$/;

/** `support@example.com`, `*@support.example.com`, `*`, or `/regex/` (case-insensitive). */
function validMatch(m: string): boolean {
  if (m.startsWith('/')) {
    if (m.length < 3 || !m.endsWith('/')) return false;
    try {
      new RegExp(m.slice(1, -1), 'i');
      return true;
    } catch {
      return false;
    }
  }
  return m === '*' || /^[^\s@]+@[^\s@]+$/.test(m);
}

const recipientSchema = z
  .object({
    match: z
      .string()
      .refine(validMatch, 'use an address (support@example.com), a pattern with * (*@support.example.com, *) or /regex/')
      .describe(
        'Recipient address (case-insensitive), a pattern where * stands for any characters (*@support.example.com; * alone: any), ' +
          'or /regex/ matched case-insensitively against the whole address.',
      ),
    route: z.string().min(1).optional().describe("Route of the messages for this recipient. Default: the entry's route."),
  })
  .strict();

const userSchema = z
  .object({
    user: z.string().min(1).describe('AUTH user name.'),
    pass: z.string().min(1).describe('Password (use ${ENV} interpolation, never a literal in the file).'),
  })
  .strict();

const ms = (what: string, dflt: number) =>
  z.number().int().min(1000).default(dflt).describe(`${what}, in milliseconds (at least 1000). Default ${dflt}.`);

export const smtpEntrySchema = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, . _ - (1-64)')
      .describe('Listener name: origin account, logs, health.'),
    route: z.string().min(1).describe('Route of accepted messages, unless a recipient names another.'),
    listen: z
      .string()
      .regex(LISTEN_RE, 'use host:port, e.g. 127.0.0.1:2525 or [::1]:2525')
      .default('127.0.0.1:2525')
      .describe('Address to listen on, host:port (port 0: a free port). Default 127.0.0.1:2525.'),
    lmtp: z.boolean().default(false).describe('Speak LMTP (LHLO, one answer per recipient) instead of SMTP. Default false.'),
    recipients: z
      .array(recipientSchema)
      .min(1)
      .describe('Accepted recipients, first match wins; any other recipient is refused with 550 at RCPT. { match: "*" } accepts all.'),
    plus_addressing: z
      .boolean()
      .default(true)
      .describe('support+billing@… also matches support@…; the detail (billing) becomes {envelope.extra.plus}. Default true.'),
    max_message_bytes: z
      .number()
      .int()
      .min(1)
      .default(SMTP_DEFAULT_MAX_MESSAGE_BYTES)
      .describe(`Largest message, in bytes (SIZE extension; 552 over it). Default ${SMTP_DEFAULT_MAX_MESSAGE_BYTES} (25 MiB).`),
    max_recipients: z
      .number()
      .int()
      .min(1)
      .default(SMTP_DEFAULT_MAX_RECIPIENTS)
      .describe(`Most recipients of one transaction (452 beyond). Default ${SMTP_DEFAULT_MAX_RECIPIENTS}.`),
    max_connections: z
      .number()
      .int()
      .min(1)
      .default(SMTP_DEFAULT_MAX_CONNECTIONS)
      .describe(`Most clients connected at once (421 beyond). Default ${SMTP_DEFAULT_MAX_CONNECTIONS}.`),
    max_connections_per_client: z
      .number()
      .int()
      .min(1)
      .default(SMTP_DEFAULT_MAX_CONNECTIONS_PER_CLIENT)
      .describe(
        `Most connections one client address may hold at once (421 at connect beyond), so one client cannot take every slot. Default ${SMTP_DEFAULT_MAX_CONNECTIONS_PER_CLIENT}.`,
      ),
    socket_timeout_ms: ms('Idle time after which a client is disconnected', SMTP_DEFAULT_SOCKET_TIMEOUT_MS),
    data_timeout_ms: ms(
      'Deadline of one DATA phase, from DATA to the final dot, however the bytes trickle in (421 and the connection closed past it; nothing stored)',
      SMTP_DEFAULT_DATA_TIMEOUT_MS,
    ),
    session_timeout_ms: ms('Deadline of a whole connection (421 and closed past it)', SMTP_DEFAULT_SESSION_TIMEOUT_MS),
    allow_plaintext_auth: z
      .boolean()
      .default(false)
      .describe(
        'Accept `auth` without `tls` on a listener that is not a loopback address (passwords then cross the network in clear, ' +
          'refused at start otherwise). Default false.',
      ),
    close_timeout_ms: ms('On shutdown, how long open connections may finish before they are closed', SMTP_DEFAULT_CLOSE_TIMEOUT_MS),
    hostname: z.string().min(1).optional().describe('Name in the greeting and in Received: headers. Default: the host name.'),
    banner: z.string().optional().describe('Text appended to the 220 greeting. Default none.'),
    add_received: z
      .boolean()
      .default(false)
      .describe('Prepend a Received: header to stored messages (the bytes are otherwise kept exact). Default false.'),
    authenticate: z
      .boolean()
      .default(false)
      .describe(
        'Verify SPF, DKIM, DMARC and ARC of each message (DNS lookups) into {envelope.spf}, {envelope.dkim}, {envelope.dmarc} ' +
          'and {envelope.extra.arc}; never refuses mail. Default false.',
      ),
    authenticate_timeout_ms: z
      .number()
      .int()
      .min(100)
      .default(SMTP_DEFAULT_AUTHENTICATE_TIMEOUT_MS)
      .describe(
        `Time budget of the verification of one message, in ms; over it the verdicts are temperror. Default ${SMTP_DEFAULT_AUTHENTICATE_TIMEOUT_MS}.`,
      ),
    tls: z
      .object({
        key: z.string().min(1).describe('Path of the PEM private key.'),
        cert: z.string().min(1).describe('Path of the PEM certificate (chain).'),
        required: z.boolean().default(false).describe('Refuse MAIL FROM before STARTTLS (loopback clients too). Default false.'),
      })
      .strict()
      .optional()
      .describe('Offer STARTTLS with this key and certificate. Default: no TLS.'),
    auth: z
      .object({
        users: z.array(userSchema).min(1).describe('Accepted users; AUTH PLAIN or LOGIN is then required before MAIL FROM.'),
      })
      .strict()
      .optional()
      .describe('Require AUTH (PLAIN, LOGIN); only over TLS unless the client is on loopback. Default: no AUTH.'),
    allow_from: z
      .array(z.string().regex(CIDR_RE, 'use an address or CIDR, e.g. 10.0.0.0/8 or 2001:db8::/32'))
      .optional()
      .describe('Client addresses allowed to connect (CIDR, IPv4 and IPv6); others get 554 at connect. Default: any.'),
  })
  .strict()
  .superRefine((e, ctx) => {
    const m = LISTEN_RE.exec(e.listen);
    const port = Number(m?.[2]);
    if (port > 65535) ctx.addIssue({ code: 'custom', path: ['listen'], message: 'port must be 0-65535' });
    const host = (m?.[1] ?? '').replace(/^\[|\]$/g, '');
    if (e.auth !== undefined && e.tls === undefined && !e.allow_plaintext_auth && !isLoopbackHost(host)) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth'],
        message:
          `needs tls on the non-loopback address ${e.listen} (passwords would cross the network in clear); ` +
          'configure tls, or set allow_plaintext_auth: true to accept that',
      });
    }
  });

export type SmtpEntry = z.output<typeof smtpEntrySchema>;
export type SmtpEntryInput = z.input<typeof smtpEntrySchema>;
