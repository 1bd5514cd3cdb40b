/** Mandrill inbound: X-Mandrill-Signature over the exact webhook URL and the POST fields. */
import { z } from 'zod';
import { secret } from '../shared-config.js';

export const mandrillFields = {
  provider: z.literal('mandrill').describe('Mandrill (Mailchimp Transactional) inbound route.'),
  webhook_key: secret('Webhook authentication key Mandrill shows for the inbound route'),
  url: z
    .url({ protocol: /^https?$/ })
    .describe('The webhook URL exactly as configured in Mandrill (scheme, user:pass@, host, port, path, query): Mandrill signs it.'),
};

/** The provider as the configuration sees it: its fields and the rules across them (one line in webhooks/providers-config.ts). */
export const provider = {
  fields: mandrillFields,
};
