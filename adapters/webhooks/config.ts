/**
 * Configuration of one webhook endpoint, embedded as `adapters.webhooks[]`. One strict object per
 * provider, told apart by `provider`: a field of another provider is an error. Each provider's
 * own fields live in its folder (`<provider>/config.ts`); this file holds the common ones.
 */
import { z } from 'zod';
import { mailgunFields } from './mailgun/config.js';
import { mandrillFields } from './mandrill/config.js';
import { postmarkFields } from './postmark/config.js';
import { rawFields } from './raw/config.js';
import { sendgridFields } from './sendgrid/config.js';
import { sesFields } from './ses/config.js';
import { sparkpostFields } from './sparkpost/config.js';

const MIB = 1024 * 1024;
/** Large enough for the biggest provider payloads (SendGrid 30 MB, Mailgun 25 MB, SES via S3 40 MB) plus form overhead. */
export const DEFAULT_WEBHOOK_BODY_LIMIT = 40 * MIB;
export const MAX_WEBHOOK_BODY_LIMIT = 1024 * MIB;

const common = {
  name: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, . _ - (1-64)')
    .describe('Endpoint name (unique among webhooks): the default path, logs, metrics and the origin account.'),
  route: z.string().min(1).describe('Route the messages of this endpoint belong to.'),
  path: z
    .string()
    .regex(/^\/[A-Za-z0-9._~/-]*$/, 'an absolute path without query, e.g. /webhooks/mailgun-in')
    .optional()
    .describe('HTTP path the provider posts to. Default /webhooks/<name>.'),
  body_limit: z
    .number()
    .int()
    .min(1024)
    .max(MAX_WEBHOOK_BODY_LIMIT)
    .default(DEFAULT_WEBHOOK_BODY_LIMIT)
    .describe(
      `Largest request body, in bytes (also the largest form field): over it the request is refused with 413. ` +
        `Default ${DEFAULT_WEBHOOK_BODY_LIMIT} (40 MiB); Postmark with raw content may need about 100 MiB.`,
    ),
};

const entry = <S extends z.ZodRawShape>(fields: S) => z.strictObject({ ...common, ...fields });

export const sendgridEntrySchema = entry(sendgridFields);
export const mailgunEntrySchema = entry(mailgunFields);
export const postmarkEntrySchema = entry(postmarkFields);
export const sesEntrySchema = entry(sesFields);
export const mandrillEntrySchema = entry(mandrillFields);
export const sparkpostEntrySchema = entry(sparkpostFields);
export const rawEntrySchema = entry(rawFields).superRefine((e, ctx) => {
  if ((e.hmac_secret === undefined) === (e.bearer_keys === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['hmac_secret'], message: 'a raw endpoint needs exactly one of hmac_secret and bearer_keys' });
  }
});

export type SendGridEntry = z.infer<typeof sendgridEntrySchema>;
export type MailgunEntry = z.infer<typeof mailgunEntrySchema>;
export type PostmarkEntry = z.infer<typeof postmarkEntrySchema>;
export type SesEntry = z.infer<typeof sesEntrySchema>;
export type MandrillEntry = z.infer<typeof mandrillEntrySchema>;
export type SparkPostEntry = z.infer<typeof sparkpostEntrySchema>;
export type RawEntry = z.infer<typeof rawEntrySchema>;
/** The names the raw and SES provider modules use for their validated entries. */
export type RawConfig = RawEntry;
export type SesConfig = SesEntry;

/** One entry of `adapters.webhooks[]`. */
export const webhookEntrySchema = z
  .discriminatedUnion('provider', [
    sendgridEntrySchema,
    mailgunEntrySchema,
    postmarkEntrySchema,
    sesEntrySchema,
    mandrillEntrySchema,
    sparkpostEntrySchema,
    rawEntrySchema,
  ])
  .superRefine((e, ctx) => {
    // An endpoint without any check would store whatever anyone posts.
    if (e.provider === 'sendgrid' && e.basic_auth === undefined && e.public_key === undefined) {
      ctx.addIssue({ code: 'custom', path: ['basic_auth'], message: 'a SendGrid endpoint needs basic_auth, public_key or both' });
    }
    if (e.provider === 'sendgrid' && e.max_age_s !== undefined && e.public_key === undefined) {
      ctx.addIssue({ code: 'custom', path: ['max_age_s'], message: 'max_age_s applies to signed requests: set public_key too' });
    }
  })
  .describe('A mail-provider inbound webhook endpoint; the fields after route depend on provider (docs/webhooks.md).');

export type WebhookEntry = z.infer<typeof webhookEntrySchema>;
export type WebhookEntryInput = z.input<typeof webhookEntrySchema>;

/** The path an endpoint listens on. */
export function webhookPath(e: Pick<WebhookEntry, 'name' | 'path'>): string {
  return e.path ?? `/webhooks/${e.name}`;
}

/** `adapters.webhooks`: names and paths unique. */
export const webhooksSchema = z
  .array(webhookEntrySchema)
  .default([])
  .superRefine((list, ctx) => {
    const names = new Set<string>();
    const paths = new Set<string>();
    list.forEach((e, i) => {
      if (names.has(e.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `webhook name "${e.name}" is used twice` });
      const p = webhookPath(e);
      if (paths.has(p)) ctx.addIssue({ code: 'custom', path: [i, 'path'], message: `webhook path "${p}" is used twice` });
      names.add(e.name);
      paths.add(p);
    });
  })
  .describe('Mail-provider inbound webhooks, one endpoint each; behaviour in docs/webhooks.md.');
