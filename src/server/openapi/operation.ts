/** An operation of the server as the OpenAPI document lists it. */
import type { OperationDoc } from '../../pipeline/operation-doc.js';

export type { OperationAnswer } from '../../pipeline/operation-doc.js';

export interface ApiOperation extends OperationDoc {
  method: 'get' | 'post' | 'delete' | 'head';
  /** In fastify's form: `/api/dlq/:id`. */
  path: string;
}
