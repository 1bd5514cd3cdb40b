/**
 * `mailgate --help` and the configuration load without the adapters' implementations: the
 * registry loads them on first use, so the help never loads an IMAP client. Nor does the help
 * load what the commands run with (the logger, the store): each command loads that when it runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, requireBuild, ROOT } from './support/dist.js';
import { modulesLoaded, packagesIn, writeLoadHook } from './support/loaded.js';

describe('mailgate --help', () => {
  let dir: string;
  let register: string;
  beforeAll(async () => {
    requireBuild();
    dir = await mkdtemp(join(tmpdir(), 'mailgate-help-'));
    register = await writeLoadHook(dir);
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  /** stdout and stderr of a node process started with the hook, with a `LOADED <package>` line for each of imapflow, pino, better-sqlite3 and zod it ran. */
  const runAll = (script: string, args: string[]): string => {
    const r = spawnSync(process.execPath, ['--import', register, script, ...args], { encoding: 'utf8' });
    const packages = packagesIn(modulesLoaded(r.stderr)).filter((p) => ['imapflow', 'pino', 'better-sqlite3', 'zod'].includes(p));
    return `${r.stdout}${r.stderr.replace(/^LOADED \S+\n/gm, '')}${packages.map((p) => `LOADED ${p}\n`).join('')}`;
  };

  it('does not load imapflow', () => {
    const out = runAll(MAIN, ['--help']);
    expect(out).toMatch(/Usage: mailgate/);
    expect(out).not.toMatch(/LOADED imapflow/);
  });

  it('loads neither the logger (pino) nor the store (better-sqlite3): each command loads them when it runs', () => {
    const out = runAll(MAIN, ['--help']);
    expect(out).toMatch(/Usage: mailgate/);
    expect(out).not.toMatch(/LOADED (pino|better-sqlite3)/);
  });

  it('builds no schema: the kinds are named (emulator --stand-in, webhook simulate --name) without their config modules or zod', () => {
    const out = runAll(MAIN, ['--help']);
    expect(out).not.toMatch(/LOADED zod/);
    for (const command of ['emulator', 'webhook simulate']) {
      const sub = runAll(MAIN, [...command.split(' '), '--help']);
      expect(sub).toMatch(/graph|webhooks/);
      expect(sub).not.toMatch(/LOADED zod/);
    }
  });

  it('the hook sees zod once a command validates a configuration', () => {
    const out = runAll(MAIN, ['import', '--source', 'acme/x', '--store', `sqlite:${join(dir, 'import.db')}`, '--yes', '/nonexistent-dir']);
    expect(out).toMatch(/LOADED zod/);
  });

  it('read-only commands build no schema: status reads the store setting of a file without zod, and loads it only to explain a bad one', async () => {
    const good = join(dir, 'good.yaml');
    await writeFile(good, `store: sqlite:${join(dir, 'missing', 'x.db')}\nroutes: [{ name: r, source: acme/x }]\n`);
    const read = runAll(MAIN, ['status', '--config', good]);
    expect(read).toMatch(/MAILGATE_ERR_STORE_UNAVAILABLE/);
    expect(read).not.toMatch(/LOADED zod/);
    expect(runAll(MAIN, ['status', '--store', 'sqlite:/nonexistent-dir/x.db'])).not.toMatch(/LOADED zod/);
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'store: 42\n');
    const explained = runAll(MAIN, ['status', '--config', bad]);
    expect(explained).toMatch(/store: must be text, not the number 42/);
    expect(explained).toMatch(/LOADED zod/);
  });

  it('names every kind of file preview and import read (PST/OST and Google Vault exports were left out)', () => {
    const out = runAll(MAIN, ['--help']).replace(/\s+/g, ' ');
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
      `const m = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/adapters/index.js')).href)});\nawait m.adapterDefinition('imap');\n`,
    );
    expect(runAll(script, [])).toMatch(/LOADED imapflow/);
  });
});
