/**
 * GET /preview/app.js: the preview page's script, compiled by `npm run build` from
 * page/preview.ts. Served with an ETag and `no-cache`, so a browser revalidates (a 304) and
 * never runs a script older than the server it talks to.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

export const PREVIEW_SCRIPT_PATH = '/preview/app.js';

/**
 * The compiled script: beside this module when it runs from dist/; from the sources (the
 * tests), the build's copy in dist/, so `npm run build` must have run.
 */
export function previewScriptFile(): string {
  const beside = new URL('./preview.js', import.meta.url);
  if (existsSync(beside)) return fileURLToPath(beside);
  return fileURLToPath(new URL('../../../dist/src/server/page/preview.js', import.meta.url));
}

interface Asset {
  body: string;
  etag: string;
}

async function load(file: string): Promise<Asset> {
  // The source map is not served: drop the reference to it so browsers do not ask.
  const body = (await readFile(file, 'utf8')).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

export function previewScriptRoute(file = previewScriptFile()) {
  return async (app: FastifyInstance): Promise<void> => {
    // Read once, on the first request: a server built without the page still starts.
    let asset: Promise<Asset> | undefined;
    app.get(PREVIEW_SCRIPT_PATH, async (request, reply) => {
      asset ??= load(file);
      const { body, etag } = await asset.catch((err: unknown) => {
        asset = undefined;
        throw err;
      });
      void reply.header('etag', etag).header('cache-control', 'no-cache');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type('text/javascript; charset=utf-8').send(body);
    });
  };
}
