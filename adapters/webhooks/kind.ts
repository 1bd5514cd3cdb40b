/** The webhooks kind: one endpoint per entry, verified and normalized by its provider (docs/webhooks.md). */
import { detailLines, detailText } from '../../src/model/origin.js';
import { defineKind, uniqueNames } from '../../src/config/kind.js';
import { WEBHOOK_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'webhooks',
  mode: 'push',
  schema: async () => (await import('./config.js')).webhookEntrySchema,
  description:
    'Mail-provider inbound webhooks (SendGrid, Mailgun, Postmark, SES via SNS, Mandrill, SparkPost, raw), one endpoint each; docs/webhooks.md.',
  errors: WEBHOOK_ERRORS,
  unique: uniqueNames('webhooks'),
  originAdapter: 'webhook',
  // Details: the provider's eventId when it sent one (endpoint.ts); the envelope is shown beside.
  showOrigin: (d) => ({
    summary: d['eventId'] === undefined ? '' : `event ${detailText(d['eventId'])}`,
    lines: detailLines(d, [['eventId', 'Event id']]),
  }),
  load: () => import('./index.js'),
  simulate: () => import('./simulate.js'),
});
