/**
 * The parse worker loads only what parsing needs: every worker of every pool loads its modules
 * before it takes a message, so each module it needs not is start-up time on the way to the
 * first comment (zod alone is about a hundred modules).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuild, ROOT } from './support/dist.js';
import { modulesLoaded, packagesIn, writeLoadHook } from './support/loaded.js';

let dir: string;
let register: string;
beforeAll(async () => {
  requireBuild();
  dir = await mkdtemp(join(tmpdir(), 'mailgate-worker-light-'));
  register = await writeLoadHook(dir);
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** The modules a node process runs that imports `module` (a path under dist/). */
function modulesOf(module: string): string[] {
  const script = `await import(${JSON.stringify(pathToFileURL(join(ROOT, module)).href)});`;
  const r = spawnSync(process.execPath, ['--import', register, '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return modulesLoaded(r.stderr);
}

describe('parse worker start-up', () => {
  // The executable's worker (what `mailgate` runs) and the library's.
  it.each([['dist/cli/worker.js'], ['dist/src/pipeline/worker.js']])(
    '%s does not load zod (the API schemas): ids and property names are checked by plain functions',
    (worker) => {
      const modules = modulesOf(worker);
      expect(packagesIn(modules)).not.toContain('zod');
      // The hook does see what the worker loads: its MIME parser (it loads no package eagerly).
      expect(modules).toContain('dist/src/mime/headers.js');
    },
  );

  it('the hook sees zod where the schemas are loaded', () => {
    expect(packagesIn(modulesOf('dist/src/model/index.js'))).toContain('zod');
  });
});
