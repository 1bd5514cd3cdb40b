/**
 * `mailgate --version` is answered before the program loads: no dependency (commander, zod,
 * pino, better-sqlite3) and none of the commands' modules, so it costs about what Node's own
 * start does.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageFacts } from '../../src/cli/node-version.js';
import { MAIN, requireBuild, ROOT } from './support/dist.js';
import { modulesLoaded, packagesIn, writeLoadHook } from './support/loaded.js';

/** The executable, its Node check and what they import. */
const EXECUTABLE = ['dist/src/cli/exit-codes.js', 'dist/src/cli/main.js', 'dist/src/cli/node-version.js', 'dist/src/package-root.js'];

describe('mailgate --version', () => {
  let dir: string;
  let register: string;
  beforeAll(async () => {
    requireBuild();
    dir = await mkdtemp(join(tmpdir(), 'mailgate-version-'));
    register = await writeLoadHook(dir);
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  const run = (args: string[]) => spawnSync(process.execPath, ['--import', register, MAIN, ...args], { encoding: 'utf8' });

  it.each([['--version'], ['-V']])('%s prints the version and loads only the executable and its Node check', (flag) => {
    const r = run([flag]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${packageFacts(ROOT).version}\n`);
    const modules = modulesLoaded(r.stderr);
    expect(modules.filter((m) => !EXECUTABLE.includes(m))).toEqual([]);
    expect(modules).toContain('dist/src/cli/main.js');
  });

  it('the hook sees the program and its dependencies once a command runs', () => {
    const r = run(['--help']);
    expect(r.status).toBe(0);
    expect(modulesLoaded(r.stderr)).toContain('dist/src/cli/program.js');
    expect(packagesIn(modulesLoaded(r.stderr))).toContain('commander');
  });
});
