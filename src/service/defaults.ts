/**
 * The embedded defaults of `mailgate serve` without a configuration file: SQLite under
 * ./data, the built-in emulator as the API, one route into `mailgate/samples` and the
 * sample mail shipped with the package read by the kind that reads files (its `files` capability).
 */
import { join } from 'node:path';
import { kindsWith } from '../../adapters/config.js';
import { packageRoot } from '../package-root.js';

export { packageRoot };

export const SAMPLES_ROUTE = 'samples';
export const SAMPLES_SOURCE = 'mailgate/samples';

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
