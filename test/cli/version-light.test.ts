/**
 * `mailgate --version` is answered before the program loads: no dependency (commander, zod,
 * pino, better-sqlite3) and none of the commands' modules, so it costs about what Node's own
 * start does.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageFacts } from '../../src/cli/node-version.js';

const ROOT = new URL('../../', import.meta.url);
const CLI = new URL('dist/src/cli/main.js', ROOT);

describe('mailgate --version', () => {
  let dir: string;
  let register: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailgate-version-'));
    // A load hook that reports every module of the package or its dependencies the process loads.
    // In-thread hooks (registerHooks) write at once: an off-thread hook's lines can be lost when
    // the process exits as quickly as --version does.
    register = join(dir, 'register.mjs');
    const hook = "if (url.startsWith('file:')) writeSync(2, `LOADED ${url}\\n`);";
    await writeFile(
      register,
      `import { registerHooks } from 'node:module';\nimport { writeSync } from 'node:fs';\n` +
        `registerHooks({ load(url, c, next) { ${hook} return next(url, c); } });\n`,
    );
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  const run = (args: string[]) => spawnSync(process.execPath, ['--import', register, CLI.pathname, ...args], { encoding: 'utf8' });
  const loaded = (stderr: string) => [...stderr.matchAll(/^LOADED (\S+)$/gm)].map((m) => m[1]!.replace(ROOT.href, ''));

  it.each([['--version'], ['-V']])('%s prints the version and loads only the executable and its Node check', (flag) => {
    const r = run([flag]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${packageFacts(ROOT.pathname).version}\n`);
    expect(loaded(r.stderr).sort()).toEqual(['dist/src/cli/exit-codes.js', 'dist/src/cli/main.js', 'dist/src/cli/node-version.js']);
  });

  it('the hook sees the program and its dependencies once a command runs', () => {
    const r = run(['--help']);
    expect(r.status).toBe(0);
    expect(loaded(r.stderr)).toContain('node_modules/commander/index.js');
  });
});
