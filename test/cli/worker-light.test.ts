/**
 * The parse worker loads only what parsing needs: every worker of every pool loads its modules
 * before it takes a message, so each module it needs not is start-up time on the way to the
 * first comment (zod alone is about a hundred modules).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuild } from './support/dist.js';

const ROOT = new URL('../../', import.meta.url);

describe('parse worker start-up', () => {
  let dir: string;
  let register: string;
  beforeAll(async () => {
    requireBuild();
    dir = await mkdtemp(join(tmpdir(), 'mailgate-worker-light-'));
    // A resolve hook that reports every package the process loads.
    const hooks = join(dir, 'hooks.mjs');
    const hook = "const m = /node_modules\\/([^/]+)/.exec(r.url); if (m) process.stderr.write('LOADED ' + m[1] + '\\n');";
    await writeFile(hooks, `export async function resolve(s, c, next) { const r = await next(s, c); ${hook} return r; }\n`);
    register = join(dir, 'register.mjs');
    await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  /** Packages loaded by a node process that imports `module` (a path under dist/). */
  const packagesOf = (module: string): string[] => {
    const r = spawnSync(
      process.execPath,
      ['--import', register, '--input-type=module', '-e', `await import(${JSON.stringify(new URL(module, ROOT).href)});`],
      {
        encoding: 'utf8',
      },
    );
    expect(r.status, r.stderr).toBe(0);
    return [...new Set([...r.stderr.matchAll(/^LOADED (.+)$/gm)].map((m) => m[1]!))].sort();
  };

  it('does not load zod (the API schemas): ids and property names are checked by plain functions', () => {
    const loaded = packagesOf('dist/src/pipeline/worker.js');
    expect(loaded).not.toContain('zod');
    expect(loaded).toContain('iconv-lite'); // the hook does see the worker's packages
  });

  it('the hook sees zod where the schemas are loaded', () => {
    expect(packagesOf('dist/src/model/index.js')).toContain('zod');
  });
});
