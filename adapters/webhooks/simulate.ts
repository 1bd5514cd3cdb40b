/**
 * `mailgate webhook simulate`: a request built by the entry's provider module exactly as the
 * provider would send it. The entry comes from the user's configuration (to test their own
 * deployment) or is assembled from secrets given on the command line (`entryFromSecrets`).
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { GatewayError } from '../../src/errors.js';
import type { Envelope } from '../../src/pipeline/types.js';
import { webhookEntrySchema, type WebhookEntry } from './config.js';
import type { ProviderName, SimulatedRequest } from './provider.js';
import { PROVIDERS, providerOf } from './providers.js';
import { signatureHeaders } from './sendgrid/index.js';

export const PROVIDER_NAMES = Object.keys(PROVIDERS) as ProviderName[];

/** Secrets given as flags; each provider takes the ones it signs with. */
export interface SimulationSecrets {
  signingKey?: string;
  basicAuth?: { user: string; pass: string };
  token?: string;
  hmacSecret?: string;
  bearer?: string;
  /** SendGrid signed-webhook policy: the PEM EC private key that signs (its public key goes in the entry). */
  privateKeyPem?: string;
}

export interface SimulateOptions {
  url: string;
  now: number;
  envelope?: Envelope;
  /** SendGrid: also sign with this PEM EC private key (the signed-webhook policy). */
  privateKeyPem?: string;
}

function invalid(message: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_CONFIG_INVALID', message);
}

function privateKey(pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw invalid(`the SendGrid signing key is not a PEM private key: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The fields of one provider's entry from flags; a provider whose secret is missing is an error naming the flag. */
function providerFields(provider: ProviderName, s: SimulationSecrets, url: string): Record<string, unknown> {
  const need = <T>(value: T | undefined, flag: string): T => {
    if (value === undefined) throw invalid(`simulating ${provider} needs ${flag} (or --config FILE --name ENTRY)`);
    return value;
  };
  switch (provider) {
    case 'mailgun':
      return { signing_key: need(s.signingKey, '--signing-key') };
    case 'postmark':
      return { basic_auth: need(s.basicAuth, '--basic-auth user:pass') };
    case 'sendgrid': {
      if (s.basicAuth === undefined && s.privateKeyPem === undefined) need(undefined, '--basic-auth user:pass or --private-key FILE');
      const pub = s.privateKeyPem === undefined ? undefined : createPublicKey(privateKey(s.privateKeyPem));
      return {
        ...(s.basicAuth && { basic_auth: s.basicAuth }),
        ...(pub && { public_key: pub.export({ type: 'spki', format: 'der' }).toString('base64') }),
      };
    }
    case 'mandrill':
      return { webhook_key: need(s.signingKey, '--signing-key (the webhook key)'), url };
    case 'sparkpost':
      return { auth_token: need(s.token, '--token') };
    case 'raw':
      if (s.hmacSecret !== undefined) return { hmac_secret: s.hmacSecret };
      return { bearer_keys: [need(s.bearer, '--hmac-secret or --bearer')] };
    case 'ses':
      throw invalid('simulating ses needs an entry with a simulation block: use --config FILE --name ENTRY');
  }
}

/** An entry of `adapters.webhooks[]` for `provider` built from flags (name and route are placeholders). */
export function entryFromSecrets(provider: string, secrets: SimulationSecrets, url: string): WebhookEntry {
  if (!(PROVIDER_NAMES as string[]).includes(provider))
    throw invalid(`unknown provider "${provider}"; the providers are ${PROVIDER_NAMES.join(', ')}`);
  const fields = providerFields(provider as ProviderName, secrets, url);
  const parsed = webhookEntrySchema.safeParse({ name: 'simulate', route: 'simulate', provider, ...fields });
  if (!parsed.success) throw invalid(parsed.error.issues.map((i) => `${i.path.join('.') || provider}: ${i.message}`).join('; '));
  return parsed.data;
}

/** The request the entry's provider would send for `raw` (SendGrid signed too when a private key is given). */
export function simulateWebhook(entry: WebhookEntry, raw: Buffer, options: SimulateOptions): SimulatedRequest {
  const { privateKeyPem, ...rest } = options;
  const request = providerOf(entry).simulate(raw, entry, rest);
  if (entry.provider === 'sendgrid' && privateKeyPem !== undefined) {
    Object.assign(request.headers, signatureHeaders(request.body, privateKey(privateKeyPem), options.now));
  }
  return request;
}
