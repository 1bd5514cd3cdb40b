/**
 * Read-only commands needed secrets and created stores: `status --config` failed on an unset
 * IMAP_PASSWORD though it reads only the store, and `status --store sqlite:./dta/…` (a typo)
 * created an empty store, said "(none yet)" and exited 0. They read only the store setting now,
 * and a missing store is an error that names the stores that exist.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { runMailgate } from './support/dist.js';

const mailgate = (...args: string[]) => runMailgate(args, { env: { MAILGATE_STORE: '' } });

let dir: string;
let db: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-read-only-'));
  db = join(dir, 'data', 'mailgate.db');
  const store = await openStore(`sqlite:${db}`);
  await store.close();
});

describe('read-only commands', () => {
  it('status with a configuration whose secrets are not set reads the store all the same', async () => {
    const config = join(dir, 'mailgate.yaml');
    writeFileSync(
      config,
      [
        'api: { url: "https://api.example.com", token: "${MAILGATE_TEST_UNSET_TOKEN}" }',
        `store: "sqlite:${db}"`,
        'adapters:',
        '  imap:',
        '    - { name: inbox, host: imap.example.com, user: u, password: "${MAILGATE_TEST_UNSET_IMAP_PASSWORD}", route: r }',
        'routes: [{ name: r, source: acme/x }]',
        '',
      ].join('\n'),
    );
    const run = await mailgate('status', '--config', config, '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ store: 'sqlite', outboxDepth: 0 });
  });

  it('a store variable the file uses must still be set, and the error says which', async () => {
    const config = join(dir, 'env-store.yaml');
    writeFileSync(config, 'store: "${MAILGATE_TEST_UNSET_STORE}"\n');
    const run = await mailgate('status', '--config', config);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('MAILGATE_TEST_UNSET_STORE');
  });

  for (const args of [['status'], ['dlq', 'list'], ['dlq', 'show', '1'], ['predictions', 'list']]) {
    it(`${args.join(' ')} with a mistyped store path creates nothing and names the store that exists`, async () => {
      const typo = join(dir, 'dta', 'mailgate.db');
      const run = await mailgate(...args, '--store', `sqlite:${typo}`);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('MAILGATE_ERR_STORE_UNAVAILABLE');
      expect(run.stderr).toContain(`there is no store at ${typo}`);
      expect(run.stderr).toContain('data/mailgate.db');
      expect(existsSync(join(dir, 'dta'))).toBe(false);
    });
  }
});
