/**
 * The OpenAPI 3.1 document of the server, generated from the zod schemas that validate the
 * requests (query, path and body) and describe the answers: JSON Schema 2020-12, OpenAPI 3.1's
 * own dialect, by `z.toJSONSchema`. Push endpoints (uploads, webhooks) describe themselves.
 */
import { z } from 'zod';
import type { PushEndpoint } from '../../pipeline/types.js';
import type { ApiOperation, OperationAnswer } from './operation.js';
import { coreOperations } from './operations.js';
import { errorBody } from './answers.js';

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** `/api/dlq/:id` → `/api/dlq/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function parameters(schema: z.ZodType | undefined, where: 'query' | 'path'): JsonSchema[] {
  if (!schema) return [];
  const s = jsonSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === 'path' || (s.required ?? []).includes(name),
      ...(description === undefined ? {} : { description }),
      schema: rest,
    };
  });
}

function answer(a: OperationAnswer): JsonSchema {
  if (a.schema === undefined && a.contentType === undefined) return { description: a.description };
  const type = a.contentType ?? 'application/json';
  const schema = a.schema === undefined ? { type: 'string', contentMediaType: type } : jsonSchema(a.schema, 'output');
  return { description: a.description, content: { [type]: { schema } } };
}

const SECURITY: Record<ApiOperation['security'], JsonSchema[]> = {
  none: [],
  admin: [{ adminKey: [] }],
  upload: [{ uploadKey: [] }],
  provider: [],
};

function operation(op: ApiOperation): JsonSchema {
  const answers: Record<string, OperationAnswer> = { ...op.answers };
  const coded = (description: string): OperationAnswer => ({ description, schema: errorBody });
  if (op.security === 'admin') {
    answers['401'] ??= coded('No admin API key, or a wrong one (`Authorization: Bearer <key>`).');
    answers['403'] ??= coded('The admin API is disabled: no `server.api_keys` configured.');
  }
  if ((op.query ?? op.params ?? op.body?.schema) !== undefined)
    answers['400'] ??= coded('A parameter or body field is invalid: the message names it.');
  return {
    operationId: op.id,
    summary: op.summary,
    tags: [op.tag],
    security: SECURITY[op.security],
    parameters: [...parameters(op.params, 'path'), ...parameters(op.query, 'query')],
    ...(op.body && {
      requestBody: {
        required: true,
        ...(op.body.description === undefined ? {} : { description: op.body.description }),
        content: Object.fromEntries(
          op.body.contentTypes.map((t) => [
            t,
            { schema: op.body!.schema ? jsonSchema(op.body!.schema, 'input') : { type: 'string', contentMediaType: t } },
          ]),
        ),
      },
    }),
    responses: Object.fromEntries(Object.entries(answers).map(([status, a]) => [status, answer(a)])),
  };
}

export interface DocumentOptions {
  version: string;
  /** The push endpoints this server mounts (configured uploads and webhooks). */
  push?: readonly PushEndpoint[];
  /** `server.public_preview`: POST /api/preview and /api/preview/threads need no key. */
  publicPreview?: boolean;
}

/** Every operation of the server: the core ones and the push endpoints that describe themselves. */
export function apiOperations(push: readonly PushEndpoint[] = [], publicPreview = false): ApiOperation[] {
  const pushed = push.flatMap((e) =>
    e.openapi ? [{ ...e.openapi, method: e.method.toLowerCase() as ApiOperation['method'], path: e.path }] : [],
  );
  const core = coreOperations().map((op) =>
    publicPreview && (op.id === 'preview' || op.id === 'previewThreads') ? { ...op, security: 'none' as const } : op,
  );
  return [...core, ...pushed];
}

export function openApiDocument(options: DocumentOptions): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const op of apiOperations(options.push, options.publicPreview)) (paths[openApiPath(op.path)] ??= {})[op.method] = operation(op);
  return {
    openapi: '3.1.0',
    info: {
      title: 'mailgate',
      version: options.version,
      summary: 'Email ingestion gateway for the Text Analytics API',
      description:
        'Health, metrics, the admin and console API, the preview endpoints, and the upload and webhook endpoints this server is configured with. Errors are `{ "error": { "code": "MAILGATE_ERR_…", "message": … } }`. See docs/server.md.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: [
      { name: 'health', description: 'Probes and Prometheus metrics.' },
      { name: 'admin', description: 'Status and dead letters (admin API key).' },
      { name: 'console', description: 'What the console reads (admin API key).' },
      { name: 'preview', description: 'What would be sent, without sending it.' },
      { name: 'upload', description: 'Messages uploaded by people and scripts (the upload adapter’s keys).' },
      { name: 'webhook', description: 'Inbound mail from mail providers, verified by each provider’s signature or credentials.' },
    ],
    components: {
      securitySchemes: {
        adminKey: { type: 'http', scheme: 'bearer', description: 'One of `server.api_keys`.' },
        uploadKey: { type: 'http', scheme: 'bearer', description: 'One of the upload adapter’s `keys` (or as `X-Api-Key`).' },
      },
    },
    paths,
  };
}
