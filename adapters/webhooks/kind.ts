/** The webhooks kind: one endpoint per entry, verified and normalized by its provider (docs/webhooks.md). */
import { defineKind, uniqueNames } from '../../src/config/kind.js';
import { webhookEntrySchema } from './config.js';
import { WEBHOOK_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'webhooks',
  mode: 'push',
  schema: webhookEntrySchema,
  description:
    'Mail-provider inbound webhooks (SendGrid, Mailgun, Postmark, SES via SNS, Mandrill, SparkPost, raw), one endpoint each; docs/webhooks.md.',
  errors: WEBHOOK_ERRORS,
  unique: uniqueNames('webhooks'),
  load: () => import('./index.js'),
  simulate: () => import('./simulate.js'),
});
