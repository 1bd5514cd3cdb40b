/** SparkPost relay webhooks: the static X-MessageSystems-Webhook-Token. */
import { z } from 'zod';
import { secret } from '../shared-config.js';

export const sparkpostFields = {
  provider: z.literal('sparkpost').describe('SparkPost relay webhook (inbound domain).'),
  auth_token: secret('The relay webhook auth_token SparkPost sends as X-MessageSystems-Webhook-Token'),
};

/** The provider as the configuration sees it: its fields and the rules across them (one line in webhooks/providers-config.ts). */
export const provider = {
  fields: sparkpostFields,
};
