/**
 * The package root: the folder of mailgate's package.json, found by walking up from a module's
 * own folder. It is the same folder whether the code runs from the sources (src/, the tests), the
 * compiled library (dist/src/) or the bundled executable (dist/cli/), whatever the working
 * directory; the samples, the page scripts and the package's version are found from it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder at or above `from` whose package.json names mailgate; undefined when there is none. */
export function findPackageRoot(from: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'mailgate') return dir;
      } catch {
        // not ours; keep walking up
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The package root above `from` (this module's folder by default); an error when there is none. */
export function packageRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  const root = findPackageRoot(from);
  if (root === undefined) throw new Error(`cannot find the mailgate package root above ${from}`);
  return root;
}
