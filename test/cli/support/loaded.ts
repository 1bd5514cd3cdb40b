/**
 * Which modules a mailgate process ran. A load hook (in-thread, registerHooks: its lines are
 * written before a short command exits) reports every file the process loads; a file of the
 * bundled executable (dist/cli/) stands for the modules it holds, read from its source map. The
 * tests of what a command loads speak of modules (`dist/src/cli/main.js`, `node_modules/zod/…`)
 * whichever form runs: the bundle (what users run) or the compiled library.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from './dist.js';

/** Writes the hook into `dir`; pass the returned path to `node --import`. */
export async function writeLoadHook(dir: string): Promise<string> {
  const register = join(dir, 'load-hook.mjs');
  await writeFile(
    register,
    `import { registerHooks } from 'node:module';\nimport { writeSync } from 'node:fs';\n` +
      "registerHooks({ load(url, c, next) { if (url.startsWith('file:')) writeSync(2, `LOADED ${url}\\n`); return next(url, c); } });\n",
  );
  return register;
}

/** The modules of the package and its dependencies in one file (several for a chunk of the bundle), relative to the package root. */
function modulesIn(file: string): string[] {
  if (!file.startsWith(join(ROOT, 'dist', 'cli') + '/')) return [relative(ROOT, file)];
  // A chunk that only re-exports another's bindings, or holds the bundler's runtime, has no map.
  if (!existsSync(`${file}.map`)) return [];
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((source) => relative(ROOT, resolve(dirname(file), source)));
}

/** The modules a process ran, from the hook's lines in its stderr: files outside the package root are left out. */
export function modulesLoaded(stderr: string): string[] {
  const files = [...stderr.matchAll(/^LOADED (\S+)$/gm)].map((m) => fileURLToPath(m[1]!));
  return [...new Set(files.filter((f) => f.startsWith(ROOT)).flatMap(modulesIn))];
}

/** The packages among `modules` (node_modules/<name>/… or node_modules/@scope/name/…). */
export const packagesIn = (modules: string[]): string[] =>
  [...new Set(modules.flatMap((m) => /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(m)?.[1] ?? []))].sort();
