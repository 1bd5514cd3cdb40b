/**
 * The parse worker loads only what parsing needs: every worker of every pool loads its modules
 * before it takes a message, so each module it needs not is start-up time on the way to the
 * first comment (zod alone is about a hundred modules).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { requireBuild } from './support/dist.js';

const ROOT = new URL('../../', import.meta.url);

/**
 * Modules (URLs) loaded by a node process that imports `module` (a path under dist/): a
 * synchronous resolve hook on the process's own thread records every module, and the process
 * prints them once the import has finished (a hook on the loader thread writing to stderr could
 * lose lines at exit).
 */
function modulesOf(module: string): string[] {
  requireBuild();
  const script = [
    "import { registerHooks } from 'node:module';",
    'const urls = [];',
    'registerHooks({ resolve(s, c, next) { const r = next(s, c); urls.push(r.url); return r; } });',
    `await import(${JSON.stringify(new URL(module, ROOT).href)});`,
    'process.stdout.write(JSON.stringify(urls));',
  ].join('\n');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as string[];
}

/** The packages among `urls` (node_modules/<name>/…). */
const packagesIn = (urls: string[]): string[] => [...new Set(urls.flatMap((u) => /\/node_modules\/([^/]+)\//.exec(u)?.[1] ?? []))].sort();

describe('parse worker start-up', () => {
  it('does not load zod (the API schemas): ids and property names are checked by plain functions', () => {
    const urls = modulesOf('dist/src/pipeline/worker.js');
    expect(packagesIn(urls)).not.toContain('zod');
    // The hook does see what the worker loads: its MIME parser (it loads no package eagerly).
    expect(urls.some((u) => u.endsWith('/dist/src/mime/headers.js'))).toBe(true);
  });

  it('the hook sees zod where the schemas are loaded', () => {
    expect(packagesIn(modulesOf('dist/src/model/index.js'))).toContain('zod');
  });
});
