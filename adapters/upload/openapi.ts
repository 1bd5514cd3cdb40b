/** The upload endpoints in the server's OpenAPI document: their bodies and answers as zod schemas. */
import { z } from 'zod';
import type { OperationDoc } from '../../src/pipeline/operation-doc.js';
import type { PushItemState } from '../../src/pipeline/types.js';

/** The error body of every endpoint. */
const refusal = z.object({ error: z.object({ code: z.string().describe('MAILGATE_ERR_* code'), message: z.string() }) });
const refused = (description: string) => ({ description, schema: refusal });

const stored = z.object({
  results: z.array(
    z.object({
      id: z
        .string()
        .describe('For GET …/{id} with the same key: `<item>.<tag>`, the tag made for the key that uploaded it (not guessable)'),
      item: z.string().describe('The stored item, as the console and the admin API number it'),
      duplicate: z.boolean().describe('The same message was stored before on this route: nothing new stored'),
      dead: z
        .object({ code: z.string(), message: z.string() })
        .optional()
        .describe('Stored as a dead letter (it cannot become a comment): the coded reason'),
      file: z.string().optional().describe('The multipart file name'),
      index: z.number().optional().describe('The message index inside an mbox, or the item position inside a PST/OST'),
    }),
  ),
});

export const itemState = z.object({
  id: z.string(),
  route: z.string(),
  state: z.enum(['queued', 'retrying', 'delivered', 'dead']),
  commentId: z.string().optional(),
  attempts: z.number().optional(),
  nextAttemptAt: z.string().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
// The document describes exactly what the sink answers.
const _itemState: z.output<typeof itemState> extends PushItemState
  ? PushItemState extends z.output<typeof itemState>
    ? true
    : false
  : false = true;
void _itemState;

export function uploadOperations(name: string): { post: OperationDoc; get: OperationDoc } {
  const unauthorized = refused("No key, or not one of this upload adapter's keys (Authorization: Bearer <key> or X-Api-Key).");
  return {
    post: {
      id: `upload_${name}`,
      summary: `Upload messages to the upload adapter "${name}": one message, an mbox, an Outlook PST/OST, or multipart files (.eml, .mbox, .msg, .pst, .ost); 202 once durable.`,
      tag: 'upload',
      security: 'upload',
      body: { contentTypes: ['message/rfc822', 'application/mbox', 'application/vnd.ms-outlook-pst', 'multipart/form-data'] },
      answers: {
        202: { description: 'Every message is stored (or known as a duplicate); one result per message.', schema: stored },
        400: refused('An unreadable body or Idempotency-Key.'),
        401: unauthorized,
        413: refused("The body exceeds the adapter's body_limit."),
        415: refused('Not message/rfc822, application/mbox, application/vnd.ms-outlook-pst or multipart/form-data.'),
        422: refused('The Idempotency-Key was used before with different content.'),
        503: refused('The store cannot take the messages now (Retry-After); nothing was stored.'),
      },
    },
    get: {
      id: `uploadItem_${name}`,
      summary: `The delivery state of an item uploaded to "${name}".`,
      tag: 'upload',
      security: 'upload',
      params: z.object({ id: z.string().describe('An id from the answer to an upload with the same key') }),
      answers: {
        200: { description: 'The item.', schema: itemState },
        401: unauthorized,
        404: refused('No item of this id uploaded with this key to this endpoint.'),
      },
    },
  };
}
