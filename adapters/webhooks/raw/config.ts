/** A raw message/rfc822 POST (a Cloudflare Email Worker, a relay); minimal, the raw module defines the full schema. */
import { z } from 'zod';
import { maxAgeSeconds, secret } from '../shared-config.js';

export const rawFields = {
  provider: z.literal('raw').describe('A message/rfc822 body posted by our own relay (e.g. a Cloudflare Email Worker).'),
  hmac_secret: secret('Shared secret of the HMAC request signature')
    .optional()
    .describe('Shared secret of the HMAC request signature. Default none.'),
  bearer_keys: z.array(secret('Bearer key')).min(1).optional().describe('Accepted bearer keys. Default none.'),
  max_age_s: maxAgeSeconds().default(300).describe('Largest age of the signed timestamp, in seconds. Default 300.'),
};
