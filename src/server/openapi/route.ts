/** GET /api/openapi.json: the document of this server, built once from its configuration. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { PushEndpoint } from '../../pipeline/types.js';
import { openApiDocument } from './document.js';

/** mailgate's version, from the package.json above this module (src/ in tests, dist/src/ built). */
function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'mailgate') return pkg.version ?? '0.0.0';
  }
  return '0.0.0';
}

export function openApiRoute(options: { push: readonly PushEndpoint[]; publicPreview: boolean }) {
  const document = JSON.stringify(openApiDocument({ version: packageVersion(), push: options.push, publicPreview: options.publicPreview }));
  return async (app: FastifyInstance): Promise<void> => {
    // No key: the document describes the endpoints and holds no data.
    app.get('/api/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(document));
  };
}
