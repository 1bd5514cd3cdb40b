/**
 * The Node.js releases mailgate runs on: package.json's `engines.node` (`>=22`), checked by the
 * `mailgate` executable before it loads anything else. On an older Node a dependency would fail in
 * its own way (a native module, a missing API, a syntax error); this names the Node that is needed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPackageRoot } from '../package-root.js';

/** The package root above this module: src/cli/ (tests), dist/src/cli/ (the library) or dist/cli/ (the executable). */
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = findPackageRoot(HERE) ?? HERE;

export interface PackageFacts {
  version: string;
  /** `engines.node`, e.g. ">=22"; undefined when package.json cannot be read. */
  nodeRange: string | undefined;
}

export function packageFacts(root: string = ROOT): PackageFacts {
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string; engines?: { node?: string } };
    return { version: pkg.version ?? '0.0.0', nodeRange: pkg.engines?.node };
  } catch {
    return { version: '0.0.0', nodeRange: undefined };
  }
}

function parts(version: string): number[] {
  return version.split('.').map((p) => Number.parseInt(p, 10));
}

/** Whether `version` (e.g. "20.20.2") satisfies a range of the form `>=MAJOR[.MINOR[.PATCH]]`; other forms are not checked. */
export function satisfies(version: string, range: string): boolean {
  const m = /^\s*>=\s*v?(\d+(?:\.\d+){0,2})\s*$/.exec(range);
  if (!m?.[1]) return true;
  const have = parts(version);
  const need = parts(m[1]);
  for (let i = 0; i < 3; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/**
 * Why this Node cannot run mailgate, with what to do (undefined when it can). The hint about
 * scripts/setup.sh is given only where the checkout has it.
 */
export function unsupportedNode(running: string, range: string | undefined, execPath: string, root: string = ROOT): string | undefined {
  if (range === undefined || satisfies(running, range)) return undefined;
  const lines = [`mailgate needs Node.js ${range} (a supported release line: 22 or 24); this is Node.js ${running} (${execPath}).`];
  if (existsSync(join(root, 'scripts', 'setup.sh'))) {
    lines.push(
      "In this checkout, `bash scripts/setup.sh node` installs a supported Node into .node/ (beside the machine's own, which it leaves alone)",
      'and `npm ci` with it; then run with PATH="$PWD/.node/bin:$PATH", e.g. PATH="$PWD/.node/bin:$PATH" npm start.',
    );
  } else {
    lines.push('Install Node.js 22 or 24 (https://nodejs.org/en/download) and run mailgate with it.');
  }
  return lines.join('\n') + '\n';
}
