/**
 * `mailgate --help` and the configuration load without the adapters' implementations: the
 * registry loads them on first use, so the help never loads an IMAP client. Nor does the help
 * load what the commands run with (the logger, the store): each command loads that when it runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url);
const CLI = new URL('dist/src/cli/main.js', ROOT);

describe('mailgate --help', () => {
  let dir: string;
  let register: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailgate-help-'));
    // A resolve hook that reports every import of imapflow, pino, better-sqlite3 or zod; in-thread
    // (registerHooks), so that its lines are written before a short command exits.
    const hook = "for (const p of ['imapflow', 'pino', 'better-sqlite3', 'zod']) if (s === p) writeSync(2, `LOADED ${p}\\n`);";
    register = join(dir, 'register.mjs');
    await writeFile(
      register,
      `import { registerHooks } from 'node:module';\nimport { writeSync } from 'node:fs';\n` +
        `registerHooks({ resolve(s, c, next) { ${hook} return next(s, c); } });\n`,
    );
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  /** stdout and stderr of a node process started with the hook. */
  const runAll = (script: string, args: string[]): string => {
    const r = spawnSync(process.execPath, ['--import', register, script, ...args], { encoding: 'utf8' });
    return `${r.stdout}${r.stderr}`;
  };

  it('does not load imapflow', () => {
    const out = runAll(CLI.pathname, ['--help']);
    expect(out).toMatch(/Usage: mailgate/);
    expect(out).not.toMatch(/LOADED imapflow/);
  });

  it('loads neither the logger (pino) nor the store (better-sqlite3): each command loads them when it runs', () => {
    const out = runAll(CLI.pathname, ['--help']);
    expect(out).toMatch(/Usage: mailgate/);
    expect(out).not.toMatch(/LOADED (pino|better-sqlite3)/);
  });

  it('builds no schema: the kinds are named (emulator --stand-in, webhook simulate --name) without their config modules or zod', () => {
    const out = runAll(CLI.pathname, ['--help']);
    expect(out).not.toMatch(/LOADED zod/);
    for (const command of ['emulator', 'webhook simulate']) {
      const sub = runAll(CLI.pathname, [...command.split(' '), '--help']);
      expect(sub).toMatch(/graph|webhooks/);
      expect(sub).not.toMatch(/LOADED zod/);
    }
  });

  it('the hook sees zod once a command validates a configuration', () => {
    const out = runAll(CLI.pathname, [
      'import',
      '--source',
      'acme/x',
      '--store',
      `sqlite:${join(dir, 'import.db')}`,
      '--yes',
      '/nonexistent-dir',
    ]);
    expect(out).toMatch(/LOADED zod/);
  });

  it('read-only commands build no schema: status reads the store setting of a file without zod, and loads it only to explain a bad one', async () => {
    const good = join(dir, 'good.yaml');
    await writeFile(good, `store: sqlite:${join(dir, 'missing', 'x.db')}\nroutes: [{ name: r, source: acme/x }]\n`);
    const read = runAll(CLI.pathname, ['status', '--config', good]);
    expect(read).toMatch(/MAILGATE_ERR_STORE_UNAVAILABLE/);
    expect(read).not.toMatch(/LOADED zod/);
    expect(runAll(CLI.pathname, ['status', '--store', 'sqlite:/nonexistent-dir/x.db'])).not.toMatch(/LOADED zod/);
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'store: 42\n');
    const explained = runAll(CLI.pathname, ['status', '--config', bad]);
    expect(explained).toMatch(/store: must be text, not the number 42/);
    expect(explained).toMatch(/LOADED zod/);
  });

  it('names every kind of file preview and import read (PST/OST and Google Vault exports were left out)', () => {
    const out = runAll(CLI.pathname, ['--help']).replace(/\s+/g, ' ');
    for (const command of ['preview', 'import']) {
      expect(out).toMatch(
        new RegExp(
          `${command} \\[options\\] <path\\.\\.\\.> [^:]*mbox files, maildirs, Outlook \\.msg and PST/OST files and Google Vault exports`,
        ),
      );
    }
  });

  it('the hook sees imapflow once the registry builds an IMAP adapter', async () => {
    const script = join(dir, 'imap.mjs');
    await writeFile(
      script,
      `const m = await import(${JSON.stringify(new URL('dist/adapters/index.js', ROOT).href)});\nawait m.adapterDefinition('imap');\n`,
    );
    expect(runAll(script, [])).toMatch(/LOADED imapflow/);
  });
});
