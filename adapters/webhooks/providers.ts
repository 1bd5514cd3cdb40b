/**
 * The provider registry: provider name → module. A new provider is a folder, one line in
 * providers-config.ts (its fields) and one line here (the compiler asks for it).
 */
import type { EntryOf, ProviderName, WebhookEntry } from './config.js';
import { mailgun } from './mailgun/index.js';
import { mandrill } from './mandrill/index.js';
import { postmark } from './postmark/index.js';
import type { ProviderModule } from './provider.js';
import { rawProvider as raw } from './raw/index.js';
import { sendgrid } from './sendgrid/index.js';
import { sesProvider as ses } from './ses/index.js';
import { sparkpost } from './sparkpost/index.js';

export const PROVIDERS: { readonly [P in ProviderName]: ProviderModule<EntryOf<P>> } = {
  sendgrid,
  mailgun,
  postmark,
  ses,
  mandrill,
  sparkpost,
  raw,
};

/** Providers that probe the URL with HEAD before saving a webhook (answered by their handshake). */
export const HEAD_PROBES: ReadonlySet<ProviderName> = new Set(['mandrill']);

/** The module of an entry, typed for that entry. */
export function providerOf<E extends WebhookEntry>(entry: E): ProviderModule<E> {
  return PROVIDERS[entry.provider] as unknown as ProviderModule<E>;
}
