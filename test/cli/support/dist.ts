/** The tests of the pool and the CLI run the compiled code (`npm test` builds first). */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** What users run: the bundled executable (package.json `bin`). */
export const MAIN = join(ROOT, 'dist/cli/mailgate.js');
export const SAMPLES = join(ROOT, 'samples/files');

export function requireBuild(): void {
  if (!existsSync(MAIN)) throw new Error('dist/ is missing: run `npm run build` first (`npm test` does)');
  // tsc alone leaves the bundle of an earlier build: the tests would run old code.
  if (statSync(MAIN).mtimeMs < statSync(join(ROOT, 'dist/src/cli/main.js')).mtimeMs) {
    throw new Error('dist/cli/ is older than dist/src/: run `npm run build` (tsc alone does not bundle)');
  }
}

export async function importPool(): Promise<typeof import('../../../src/pipeline/pool.js')> {
  requireBuild();
  return (await import(pathToFileURL(join(ROOT, 'dist/src/pipeline/pool.js')).href)) as typeof import('../../../src/pipeline/pool.js');
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runMailgate(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  requireBuild();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
