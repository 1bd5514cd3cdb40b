/** Postmark inbound: no signature, HTTP basic auth in the webhook URL. */
import { z } from 'zod';
import { basicAuthSchema } from '../shared-config.js';

export const postmarkFields = {
  provider: z.literal('postmark').describe('Postmark inbound webhook (JSON; enable "Include raw email content").'),
  basic_auth: basicAuthSchema,
};

/** The provider as the configuration sees it: its fields and the rules across them (one line in webhooks/providers-config.ts). */
export const provider = {
  fields: postmarkFields,
};
