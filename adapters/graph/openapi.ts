/** The change-notification receiver of a Graph connection in the server's OpenAPI document (docs/graph.md "Wake-ups"). */
import { z } from 'zod';
import type { OperationDoc } from '../../src/pipeline/operation-doc.js';

const refusal = z.object({ error: z.object({ code: z.string().describe('MAILGATE_ERR_GRAPH_NOTIFICATION'), message: z.string() }) });

/** One change or lifecycle notification, as Graph sends them (learn.microsoft.com/graph/change-notifications-delivery-webhooks). */
const notification = z.object({
  subscriptionId: z.string().describe("The subscription mailgate made for one of the connection's folders"),
  clientState: z.string().nullable().optional().describe('Must equal notifications.client_state; a notification without it is refused'),
  changeType: z.string().optional().describe('`created` (the subscriptions ask for arrivals only)'),
  resource: z.string().optional(),
  lifecycleEvent: z
    .enum(['reauthorizationRequired', 'subscriptionRemoved', 'missed'])
    .optional()
    .describe('Lifecycle notifications: renew, recreate, or run a delta round'),
  subscriptionExpirationDateTime: z.string().optional(),
  tenantId: z.string().optional(),
});

export function notificationOperation(name: string): OperationDoc {
  return {
    id: `graphNotifications_${name}`,
    summary: `Change and lifecycle notifications from Microsoft Graph for the Graph connection "${name}" (wake-ups: the folder's mailbox runs a delta round); also the validation handshake.`,
    tag: 'webhook',
    security: 'provider',
    query: z
      .object({
        validationToken: z
          .string()
          .optional()
          .describe('The validation handshake when a subscription is made or renewed: echoed as text/plain with 200, within 10 s'),
      })
      .strict(),
    body: {
      contentTypes: ['application/json'],
      schema: z.object({ value: z.array(notification) }),
      description: 'A collection of notifications; each is checked against notifications.client_state (constant time).',
    },
    answers: {
      200: { description: 'The validation handshake: the validationToken, as it came.', contentType: 'text/plain' },
      202: {
        description:
          'Taken: every notification with the configured clientState wakes its folder (others are refused one by one and logged). Nothing is stored: the delta round reads the mail.',
      },
      400: { description: 'The body is not a notification collection.', schema: refusal },
    },
  };
}
