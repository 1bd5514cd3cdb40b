/** SendGrid Inbound Parse: basic auth and/or a signed-webhook security policy (ECDSA P-256). */
import { z } from 'zod';
import { basicAuthSchema, maxAgeSeconds } from '../shared-config.js';

export const sendgridFields = {
  provider: z.literal('sendgrid').describe('SendGrid Inbound Parse (raw "POST the raw, full MIME message" mode, or parsed mode).'),
  basic_auth: basicAuthSchema
    .optional()
    .describe(
      'HTTP basic auth credentials SendGrid sends (in the Parse URL: https://user:pass@host/path). ' +
        'Default none; basic_auth, public_key or both are required.',
    ),
  public_key: z
    .string()
    .regex(/^[A-Za-z0-9+/=\s]+$/, 'base64 DER SubjectPublicKeyInfo')
    .optional()
    .describe('Public key of a Parse security policy (base64 DER SPKI, P-256): requests must carry a valid ECDSA signature. Default none.'),
  max_age_s: maxAgeSeconds()
    .optional()
    .describe(
      'With public_key: largest age of the signed timestamp, in seconds. Default none (no window: SendGrid does not say ' +
        'that retries are re-signed; a replayed request only repeats a stored message, which is deduplicated).',
    ),
};

/** The provider as the configuration sees it: its fields and the rules across them (one line in webhooks/providers-config.ts). */
export const provider = {
  fields: sendgridFields,
  // An endpoint without any check would store whatever anyone posts.
  check: (e: { basic_auth?: unknown; public_key?: string; max_age_s?: number }) => [
    ...(e.basic_auth === undefined && e.public_key === undefined
      ? [{ path: 'basic_auth', message: 'a SendGrid endpoint needs basic_auth, public_key or both' }]
      : []),
    ...(e.max_age_s !== undefined && e.public_key === undefined
      ? [{ path: 'max_age_s', message: 'max_age_s applies to signed requests: set public_key too' }]
      : []),
  ],
};
