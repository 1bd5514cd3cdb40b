/**
 * loadNamedConfig builds the schema of only the adapter kinds a configuration names (a kind
 * without entries has nothing to validate). What it gives must be what loadConfig gives: the same
 * configuration, every kind's list included, and for an invalid file the same error.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { loadNamedConfig } from '../../src/config/load-named.js';
import { ADAPTER_KINDS } from '../../adapters/config.js';

function file(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'mailgate-named-')), 'mailgate.yaml');
  writeFileSync(path, text);
  return path;
}

const env = {
  MAILGATE_API_TOKEN: 't',
  MAILGATE_ADMIN_KEY: 'admin-key-0123456789',
  IMAP_PASSWORD: 'p',
  IMAP_CLIENT_ID: 'c',
  IMAP_REFRESH_TOKEN: 'r',
  PGPASSWORD: 'pg',
  NAME: 'n',
};

async function error(load: () => unknown): Promise<{ code?: string; message?: string }> {
  try {
    await load();
  } catch (err) {
    return err as { code?: string; message?: string };
  }
  throw new Error('loaded');
}

const routes = 'routes: [{ name: r, source: acme/x }, { name: p, mode: predict, dataset: acme/d }]\n';

describe('loadNamedConfig', () => {
  it('gives what loadConfig gives: no file, flags only, every kind an empty list', async () => {
    const overrides = { store: 'sqlite:/tmp/x.db', routes: [{ name: 'import', source: 'acme/src' }] };
    const named = await loadNamedConfig({ env: {}, overrides });
    expect(named).toEqual(loadConfig({ env: {}, overrides }));
    expect(Object.keys(named.adapters).sort()).toEqual([...ADAPTER_KINDS].sort());
    expect(Object.values(named.adapters).every((list) => Array.isArray(list) && list.length === 0)).toBe(true);
    expect(Object.isFrozen(named.adapters)).toBe(true);
  });

  it('gives what loadConfig gives for the sample configurations and a file naming some kinds', async () => {
    const some = file(
      routes +
        'adapters:\n' +
        '  files: [{ name: drop, paths: [/tmp/drop], route: r }]\n' +
        '  imap: [{ name: inbox, host: imap.example.com, auth: { user: u, pass: p }, route: r }]\n' +
        '  upload: []\n',
    );
    for (const path of ['samples/mailgate.yaml', 'samples/mailgate.example.yaml', some]) {
      const named = await loadNamedConfig({ file: path, env });
      expect(named).toEqual(loadConfig({ file: path, env }));
    }
  });

  it('reports an invalid configuration with loadConfig’s error: a named kind’s entry, an unknown kind, a kind given as a mapping', async () => {
    const bad = [
      `${routes}adapters:\n  imap: [{ name: inbox, auth: { user: u, pass: p }, route: r }]\n`,
      `${routes}adapters:\n  imapp: [{ name: inbox }]\n`,
      `${routes}adapters:\n  gmail: { name: g }\n`,
      `${routes}adapters: [imap]\n`,
      `${routes}adapters:\n  files: [{ name: drop, paths: [/tmp/drop], route: nowhere }]\n`,
    ];
    for (const text of bad) {
      const path = file(text);
      const want = await error(() => loadConfig({ file: path, env }));
      expect(want.code).toBe('MAILGATE_ERR_CONFIG_INVALID');
      expect(await error(() => loadNamedConfig({ file: path, env }))).toEqual(want);
    }
  });
});
