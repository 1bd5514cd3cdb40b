/**
 * Configuration of a `raw` webhook endpoint: the request body is the message itself (a
 * Cloudflare Email Worker, a script). Authenticated by an HMAC signature or bearer keys.
 */
import { z } from 'zod';

/** Cloudflare Email Routing's 25 MiB cap plus room for a larger relay. */
export const RAW_DEFAULT_BODY_LIMIT = 26 * 1024 * 1024;
export const RAW_DEFAULT_MAX_AGE_S = 300;

const secret = (what: string) => z.string().min(16, `${what} must be at least 16 characters`);

/** The raw provider's own fields within `adapters.webhooks[]` (the common ones come from ../config.ts). */
export const rawFields = {
  provider: z.literal('raw').describe('The request body is the raw message (message/rfc822 or any type).'),
  body_limit: z
    .number()
    .int()
    .min(1)
    .default(RAW_DEFAULT_BODY_LIMIT)
    .describe(`Largest request body, in bytes (413 over it). Default ${RAW_DEFAULT_BODY_LIMIT} (26 MiB).`),
  hmac_secret: secret('hmac_secret')
    .optional()
    .describe(
      'Shared secret: requests carry X-Mailgate-Signature: t=<unix s>,v2=<hex HMAC-SHA256 of "<t>.<envelope from>\\n<envelope to>\\n<event id>\\n<body>"> ' +
        '(v1=<HMAC of "<t>.<body>"> only for requests without X-Mailgate-Envelope-* and X-Mailgate-Event-Id). Exclusive with bearer_keys.',
    ),
  max_age_s: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(RAW_DEFAULT_MAX_AGE_S)
    .describe(`How far the signature timestamp may lie from now (either way), in seconds. Default ${RAW_DEFAULT_MAX_AGE_S}.`),
  bearer_keys: z
    .array(secret('a bearer key'))
    .min(1)
    .optional()
    .describe('Accepted keys for Authorization: Bearer <key> (several for rotation). Exclusive with hmac_secret.'),
};

/** The provider as the configuration sees it: its fields and the rules across them (one line in webhooks/providers-config.ts). */
export const provider = {
  fields: rawFields,
  check: (e: { hmac_secret?: string; bearer_keys?: string[] }) =>
    (e.hmac_secret === undefined) === (e.bearer_keys === undefined)
      ? [{ path: 'hmac_secret', message: 'a raw endpoint needs exactly one of hmac_secret and bearer_keys' }]
      : [],
};
