/** A webhook endpoint in the server's OpenAPI document: what the provider posts and what it gets back. */
import { z } from 'zod';
import type { OperationAnswer, OperationDoc } from '../../src/pipeline/operation-doc.js';
import type { WebhookEntry } from './config.js';
import { REFUSAL_CODES, type ProviderModule, type RefusalKind } from './provider.js';

const errorBody = z.object({ error: z.object({ code: z.string().describe('MAILGATE_ERR_WEBHOOK_* code'), message: z.string() }) });

export function webhookOperation(entry: WebhookEntry, module: ProviderModule<WebhookEntry>, method: 'POST' | 'HEAD'): OperationDoc {
  const answers: Record<number, OperationAnswer> = {};
  if (method === 'HEAD') {
    answers[200] = { description: `The endpoint exists (${entry.provider} probes it before it posts).` };
    return {
      id: `webhookProbe_${entry.name}`,
      summary: `Probe of the ${entry.provider} webhook "${entry.name}".`,
      tag: 'webhook',
      security: 'provider',
      answers,
    };
  }
  const stored = z.object({ ok: z.literal(true) });
  // SES: an SNS subscription confirmation is answered with what was confirmed.
  const confirmed = z.object({ type: z.string(), topicArn: z.string() });
  answers[200] = {
    description: 'Every message of the request is stored (or known as a duplicate).',
    schema: entry.provider === 'ses' ? z.union([stored, confirmed]) : stored,
  };
  // Each refusal answers the status the provider reads as "do not retry" or "retry", as it documents.
  const kinds = Object.keys(REFUSAL_CODES) as RefusalKind[];
  for (const kind of kinds) {
    const status = kind === 'unavailable' ? 503 : module.refusalStatus(kind);
    const codes = kinds.filter((k) => (k === 'unavailable' ? 503 : module.refusalStatus(k)) === status).map((k) => REFUSAL_CODES[k]);
    answers[status] = { description: `Refused: ${[...new Set(codes)].join(', ')}.`, schema: errorBody };
  }
  answers[503] = { description: 'Not stored (the store is unavailable or full): the provider retries (Retry-After).', schema: errorBody };
  return {
    id: `webhook_${entry.name}`,
    summary: `Inbound mail from ${entry.provider} for the webhook "${entry.name}" (route ${entry.route}), verified by the provider's signature or credentials.`,
    tag: 'webhook',
    security: 'provider',
    body: { contentTypes: ['*/*'], description: `The request exactly as ${entry.provider} sends it (docs/webhooks.md).` },
    answers,
  };
}
