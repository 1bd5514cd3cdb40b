/**
 * The page scripts, compiled by `npm run build` from page/*.ts and page/console/*.ts:
 * GET /preview/app.js and GET /console/<module>.js. Served with an ETag and `no-cache`, so a
 * browser revalidates (a 304) and never runs a script older than the server it talks to.
 * Only the modules listed here are served: a name is never mapped onto the file system.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { packageRoot } from '../../package-root.js';

export const PREVIEW_SCRIPT_PATH = '/preview/app.js';

/** The console's ES modules (page/console/<name>.ts), imported by one another with relative URLs. */
export const CONSOLE_MODULES = [
  'app',
  'api',
  'dom',
  'format',
  'login',
  'items',
  'item',
  'thread',
  'origin',
  'dead',
  'overview',
  'mailboxes',
  'paused',
  'live',
  'sse',
] as const;

/**
 * A compiled page script: the build's copy in dist/src/server/page/ of the package, whether the
 * server runs from the compiled library, the bundled executable (dist/cli/) or the sources (the
 * tests: `npm run build` must have run).
 */
export function pageScriptFile(relative: string): string {
  return join(packageRoot(), 'dist', 'src', 'server', 'page', relative);
}

export function previewScriptFile(): string {
  return pageScriptFile('preview.js');
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

function scriptRoute(app: FastifyInstance, path: string, file: string): void {
  // Read once, on the first request: a server built without the page still starts.
  let asset: Promise<Asset> | undefined;
  app.get(path, async (request, reply) => {
    asset ??= load(file);
    const { body, etag } = await asset.catch((err: unknown) => {
      asset = undefined;
      throw err;
    });
    void reply.header('etag', etag).header('cache-control', 'no-cache');
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('text/javascript; charset=utf-8').send(body);
  });
}

export function previewScriptRoute(file = previewScriptFile()) {
  return async (app: FastifyInstance): Promise<void> => {
    scriptRoute(app, PREVIEW_SCRIPT_PATH, file);
  };
}

export function consoleScriptRoutes() {
  return async (app: FastifyInstance): Promise<void> => {
    for (const name of CONSOLE_MODULES) scriptRoute(app, `/console/${name}.js`, pageScriptFile(`console/${name}.js`));
  };
}
