/**
 * The `adapters:` section is validated with the rest of the file: an unknown adapter kind is
 * an error naming the kinds there are, and an IMAP account's errors name its index and the fix.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADAPTER_KINDS } from '../../adapters/config.js';
import { parseImapAccount } from '../../adapters/imap/index.js';
import { loadConfig } from '../../src/config/load.js';
import { isGatewayError } from '../../src/errors.js';
import { spawnServe } from './serve-process.js';

const dir = mkdtempSync(join(tmpdir(), 'mailgate-config-adapters-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let seq = 0;
function file(text: string): string {
  const path = join(dir, `c${seq++}.yaml`);
  writeFileSync(path, `routes: [{ name: support, source: acme/support }]\n${text}`);
  return path;
}

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isGatewayError(err) && err.code === 'MAILGATE_ERR_CONFIG_INVALID') return err.message;
    throw err;
  }
  throw new Error('expected MAILGATE_ERR_CONFIG_INVALID');
}

const good = '{ name: a, route: support, host: imap.example.com, auth: { user: u, pass: p } }';

describe('configuration of adapters', () => {
  it('refuses an unknown adapter kind, naming it and the kinds there are', () => {
    const typo = message(() => loadConfig({ file: file(`adapters:\n  imapp:\n    - ${good}\n`) }));
    expect(typo).toContain('adapters.imapp: unknown field "imapp"; did you mean "imap"? (line 3, column 3)');
    const other = message(() => loadConfig({ file: file(`adapters:\n  exchange:\n    - ${good}\n`) }));
    expect(other).toContain(
      `adapters.exchange: unknown field "exchange"; the fields here are ${ADAPTER_KINDS.join(', ')} (line 3, column 3)`,
    );
    expect(ADAPTER_KINDS).toEqual(expect.arrayContaining(['files', 'imap', 'webhooks', 'upload', 'smtp']));
  });

  it('names the index of the IMAP account in each error, with the fix', () => {
    const auth = message(() =>
      loadConfig({
        file: file(`adapters:\n  imap:\n    - ${good}\n    - { name: b, route: support, host: h, auth: { user: u, password: p } }\n`),
      }),
    );
    expect(auth).toMatch(/^\s*adapters\.imap\[1\]\.auth: use one of \{ user, pass \}, \{ user, accessToken \} or \{ user, oauth2: /m);
    const port = message(() =>
      loadConfig({ file: file(`adapters:\n  imap:\n    - { name: a, route: support, host: h, port: 0, auth: { user: u, pass: p } }\n`) }),
    );
    expect(port).toMatch(/adapters\.imap\[0\]\.port: /);
    const field = message(() =>
      loadConfig({
        file: file(`adapters:\n  imap:\n    - { name: a, route: support, host: h, auth: { user: u, pass: p }, idel: true }\n`),
      }),
    );
    expect(field).toContain('adapters.imap[0].idel: unknown field "idel"; did you mean "idle"? (line 4, column');
    const grant = message(() =>
      loadConfig({
        file: file(
          `adapters:\n  imap:\n    - { name: a, route: support, host: h, auth: { user: u, oauth2: { tokenUrl: "https://t.example/token", clientId: c, grant: refresh_token } } }\n`,
        ),
      }),
    );
    expect(grant).toContain('adapters.imap[0].auth.oauth2.refreshToken: the refresh_token grant needs refreshToken');
  });

  it('reports account, route and name mistakes together, in one round', () => {
    const text = message(() =>
      loadConfig({
        file: file(
          `delivery: { flush_ms: -1 }\nadapters:\n  imap:\n    - ${good}\n    - { name: a, route: nope, host: h, auth: { user: u, pass: p } }\n    - { name: c, route: support, host: h, auth: { user: u } }\n`,
        ),
      }),
    );
    expect(text).toMatch(/delivery\.flush_ms: /);
    expect(text).toMatch(/adapters\.imap\[1\]\.route: adapter route must name one of the routes: support/);
    expect(text).toContain('adapters.imap[1].name: account name "a" is already used by adapters.imap[0]; give each account its own name');
    expect(text).toMatch(/adapters\.imap\[2\]\.auth: use one of/);
  });

  it('fills the defaults of an account in the loaded configuration', () => {
    const c = loadConfig({ file: file(`adapters:\n  imap:\n    - ${good}\n`) });
    expect(c.adapters.imap[0]).toMatchObject({
      name: 'a',
      port: 993,
      secure: true,
      folders: ['INBOX'],
      after_delivery: 'none',
      batch_size: 100,
    });
  });

  it('parseImapAccount names the index it was given', () => {
    expect(message(() => parseImapAccount({ name: 'a', route: 'r', host: 'h', auth: {} }, 3))).toMatch(
      /adapters\.imap\[3\]\.auth: use one of/,
    );
  });

  it('`mailgate serve` with an unknown adapter kind exits at once with the coded error', async () => {
    const serve = spawnServe(['--config', file(`server: { listen: 127.0.0.1:0 }\nadapters:\n  imapp:\n    - ${good}\n`)], { cwd: dir });
    const exit = await serve.exit;
    expect(exit.code).not.toBe(0);
    expect(serve.stderr()).toContain('MAILGATE_ERR_CONFIG_INVALID');
    expect(serve.stderr()).toContain('adapters.imapp: unknown field "imapp"; did you mean "imap"?');
  });
});
