/**
 * The `yaml` package, loaded on first use (a few dozen modules): a command run without a
 * configuration file, such as `mailgate import --source …`, never loads it.
 */
import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');

let loaded: Yaml | undefined;

export function yaml(): Yaml {
  return (loaded ??= createRequire(import.meta.url)('yaml') as Yaml);
}
