/** GET /api/openapi.json: the document of this server, built once from its configuration. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { findPackageRoot } from '../../package-root.js';
import type { PushEndpoint } from '../../pipeline/types.js';
import { openApiDocument } from './document.js';

/** mailgate's version, from the package.json of the package this module runs from. */
function packageVersion(): string {
  const root = findPackageRoot();
  if (root === undefined) return '0.0.0';
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0';
}

export function openApiRoute(options: { push: readonly PushEndpoint[]; publicPreview: boolean }) {
  const document = JSON.stringify(openApiDocument({ version: packageVersion(), push: options.push, publicPreview: options.publicPreview }));
  return async (app: FastifyInstance): Promise<void> => {
    // No key: the document describes the endpoints and holds no data.
    app.get('/api/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(document));
  };
}
