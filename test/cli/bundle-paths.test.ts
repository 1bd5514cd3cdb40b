/**
 * The bundled executable (dist/cli/, scripts/bundle.mjs) holds the modules of src/ and adapters/
 * in a few chunks of one folder, so a module's own URL there is its chunk's. What a module finds
 * through `import.meta.url` must still be found from the bundle: a worker thread's entry
 * (`new URL('./x.js', import.meta.url)`) is an entry of the bundle beside its chunks, a package
 * resolved with `createRequire` comes from node_modules either way, and the package's own files
 * are found from the package root (src/package-root.ts). Any other use would name a file that is
 * missing from dist/cli/ only when the bundle runs.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireBuild, ROOT } from './support/dist.js';

const sources = ['src', 'adapters'].flatMap((dir) =>
  readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f)),
);

/** Each use of `import.meta.url` (or its dirname/filename) in the sources: file and line. */
const uses = sources.flatMap((file) =>
  readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .flatMap((line) => (/import\.meta\.(url|dirname|filename)/.test(line) ? [{ file, line: line.trim() }] : [])),
);

const WORKER_ENTRY = /new URL\('\.\/([\w-]+\.js)', import\.meta\.url\)/;
const REQUIRE = /createRequire\(import\.meta\.url\)/;
/** The modules that find the package root from their own folder (walking up to package.json). */
const ROOT_FINDERS = ['src/package-root.ts', 'src/cli/node-version.ts'];

describe('the bundled executable finds what its modules find through import.meta.url', () => {
  it('each worker entry named beside a module is an entry of the bundle', () => {
    requireBuild();
    const workers = uses.flatMap((u) => WORKER_ENTRY.exec(u.line)?.[1] ?? []);
    expect(workers.sort()).toEqual(['msg-worker.js', 'pst-worker.js', 'worker.js']);
    for (const worker of workers) expect(existsSync(join(ROOT, 'dist', 'cli', worker)), `dist/cli/${worker}`).toBe(true);
  });

  it('no other module finds a file from its own URL', () => {
    const other = uses.filter((u) => !WORKER_ENTRY.test(u.line) && !REQUIRE.test(u.line) && !ROOT_FINDERS.includes(u.file));
    expect(other).toEqual([]);
  });
});
