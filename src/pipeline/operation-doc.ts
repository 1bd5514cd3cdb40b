/**
 * How an HTTP operation describes itself for the server's OpenAPI document: the zod schemas
 * that validate its query, path and body, and its answers. Push endpoints (uploads, webhooks)
 * carry one; the server's own operations are listed in src/server/openapi/operations.ts.
 */
import type { ZodType } from 'zod';

export interface OperationAnswer {
  description: string;
  /** The JSON body; omitted with a `contentType`: a body of that type (e.g. message/rfc822), else no body. */
  schema?: ZodType;
  contentType?: string;
}

export interface OperationDoc {
  /** Unique operationId, e.g. `listDeadLetters`. */
  id: string;
  summary: string;
  tag: 'health' | 'admin' | 'console' | 'preview' | 'upload' | 'webhook';
  /** admin: server.api_keys; upload: the upload adapter's keys; provider: the provider's own signature or credentials. */
  security: 'none' | 'admin' | 'upload' | 'provider';
  query?: ZodType;
  params?: ZodType;
  body?: { contentTypes: readonly string[]; schema?: ZodType; description?: string };
  /** By HTTP status. */
  answers: Record<number, OperationAnswer>;
}
