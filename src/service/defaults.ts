/**
 * The embedded defaults of `mailgate serve` without a configuration file: SQLite under
 * ./data, the built-in emulator as the API, one route into `mailgate/samples` and the
 * sample mail shipped with the package read by the kind that reads files (its `files` capability).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kindsWith } from '../../adapters/config.js';

export const SAMPLES_ROUTE = 'samples';
export const SAMPLES_SOURCE = 'mailgate/samples';

/**
 * The package root (the folder of mailgate's package.json), found from this module's own
 * location so that samples resolve the same from `src/` (tests) and `dist/src/` (npm start),
 * whatever the working directory.
 */
export function packageRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'mailgate') return dir;
      } catch {
        // not ours; keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the mailgate package root above ${from}`);
    dir = parent;
  }
}

/** The sample folders ingested by the embedded defaults. */
export function samplePaths(root: string = packageRoot()): string[] {
  return [join(root, 'samples', 'files'), join(root, 'samples', 'mime')];
}

/** The configuration input (before validation) of the embedded defaults. */
export function embeddedConfig(root: string = packageRoot()): Record<string, unknown> {
  return {
    routes: [{ name: SAMPLES_ROUTE, mode: 'sync', source: SAMPLES_SOURCE, user_properties: { 'string:Origin': '{adapter}' } }],
    adapters: Object.fromEntries(
      kindsWith('fileInputs').map((kind) => [kind, [{ name: 'samples', route: SAMPLES_ROUTE, paths: samplePaths(root) }]]),
    ),
  };
}
