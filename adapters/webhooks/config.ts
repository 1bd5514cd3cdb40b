/**
 * Configuration of one webhook endpoint, embedded as `adapters.webhooks[]`. One strict object per
 * provider, told apart by `provider`: a field of another provider is an error. Each provider's
 * own fields and rules live in its folder (`<provider>/config.ts`, listed in providers-config.ts);
 * this file holds the common ones.
 */
import { z } from 'zod';
import * as PROVIDER_CONFIGS from './providers-config.js';

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

type Configs = typeof PROVIDER_CONFIGS;
/** The providers' names (the keys of providers-config.ts). */
export type ProviderName = keyof Configs;
/** In the order of the names (a module namespace's keys are, natively; not under every test runner). */
export const PROVIDER_NAMES = (Object.keys(PROVIDER_CONFIGS) as ProviderName[]).sort();

type Issue = { path: string; message: string };
const checkOf = (p: object): ((entry: never) => Issue[]) | undefined => ('check' in p ? (p.check as (entry: never) => Issue[]) : undefined);

/** One provider's entry: the common fields and its own, strict, with its rules across fields. */
function entrySchema<P extends ProviderName>(name: P) {
  const config = PROVIDER_CONFIGS[name];
  const check = checkOf(config);
  return z.strictObject({ ...common, ...(config.fields as Configs[P]['fields']) }).superRefine((e, ctx) => {
    for (const issue of check?.(e as never) ?? []) ctx.addIssue({ code: 'custom', path: [issue.path], message: issue.message });
  });
}
type EntrySchema<P extends ProviderName> = ReturnType<typeof entrySchema<P>>;

/** The schema of one provider's entries (tests and tools; the configuration uses webhookEntrySchema). */
export function providerEntrySchema<P extends ProviderName>(name: P): EntrySchema<P> {
  return entrySchema(name);
}

/** One entry of `adapters.webhooks[]`: one strict object per provider, told apart by `provider`. */
export const webhookEntrySchema = z
  .discriminatedUnion(
    'provider',
    PROVIDER_NAMES.map((name) => entrySchema(name)) as unknown as [EntrySchema<ProviderName>, ...Array<EntrySchema<ProviderName>>],
  )
  .describe('A mail-provider inbound webhook endpoint; the fields after route depend on provider (docs/webhooks.md).');

/** The entry of provider P. */
export type EntryOf<P extends ProviderName> = { [K in P]: z.output<EntrySchema<K>> }[P];
export type SendGridEntry = EntryOf<'sendgrid'>;
export type MailgunEntry = EntryOf<'mailgun'>;
export type PostmarkEntry = EntryOf<'postmark'>;
export type SesEntry = EntryOf<'ses'>;
export type MandrillEntry = EntryOf<'mandrill'>;
export type SparkPostEntry = EntryOf<'sparkpost'>;
export type RawEntry = EntryOf<'raw'>;
/** The names the raw and SES provider modules use for their validated entries. */
export type RawConfig = RawEntry;
export type SesConfig = SesEntry;

export type WebhookEntry = EntryOf<ProviderName>;
export type WebhookEntryInput = { [K in ProviderName]: z.input<EntrySchema<K>> }[ProviderName];

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
