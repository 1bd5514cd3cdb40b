/**
 * `mailgate webhook simulate`: a request built by the entry's provider module exactly as the
 * provider would send it. The entry comes from the user's configuration (to test their own
 * deployment) or is assembled from secrets given on the command line (`entryFromSecrets`, each
 * provider taking the flags it signs with). The webhooks kind's `simulate` capability.
 */
import { GatewayError } from '../../src/errors.js';
import type { SimulateOptions, SimulatedRequest, SimulationSecrets, Simulator } from '../../src/pipeline/kind.js';
import { PROVIDER_NAMES, webhookEntrySchema, type ProviderName, type WebhookEntry } from './config.js';
import { providerOf, PROVIDERS } from './providers.js';

export { PROVIDER_NAMES };
export type { SimulateOptions, SimulationSecrets };

function invalid(message: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_CONFIG_INVALID', message);
}

/** An entry of `adapters.webhooks[]` for `provider` built from flags (name and route are placeholders). */
export function entryFromSecrets(provider: string, secrets: SimulationSecrets, url: string): WebhookEntry {
  if (!(PROVIDER_NAMES as string[]).includes(provider))
    throw invalid(`unknown provider "${provider}"; the providers are ${PROVIDER_NAMES.join(', ')}`);
  const need = <T>(value: T | undefined, flag: string): T => {
    if (value === undefined) throw invalid(`simulating ${provider} needs ${flag} (or --config FILE --name ENTRY)`);
    return value;
  };
  const fields = PROVIDERS[provider as ProviderName].fromSecrets(secrets, need, url);
  const parsed = webhookEntrySchema.safeParse({ name: 'simulate', route: 'simulate', provider, ...fields });
  if (!parsed.success) throw invalid(parsed.error.issues.map((i) => `${i.path.join('.') || provider}: ${i.message}`).join('; '));
  return parsed.data;
}

/** The request the entry's provider would send for `raw` (SendGrid signed too when a private key is given). */
export function simulateWebhook(entry: WebhookEntry, raw: Buffer, options: SimulateOptions): SimulatedRequest {
  return providerOf(entry).simulate(raw, entry, options);
}

export const simulator: Simulator = {
  command: 'webhook',
  variants: PROVIDER_NAMES,
  entryFromSecrets,
  variantOf: (entry) => (entry as WebhookEntry).provider,
  request: (entry, raw, options) => simulateWebhook(entry as WebhookEntry, raw, options),
};
