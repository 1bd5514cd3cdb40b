/**
 * Regression: a PostgreSQL URL with `?password=` or `sslpassword=` was printed in clear by the
 * CLI on a connection error (the store masked only the userinfo password and the CLI printed the
 * message unredacted). Every URL-borne secret is redacted on every path to a terminal or log.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { redactString, redactUrl } from '../../src/logger.js';
import { openStore } from '../../src/store/index.js';

const URL_WITH_SECRETS = 'postgres://mg:userinfo-pw@127.0.0.1:1/mailgate?sslpassword=ssl-pw&password=query-pw&api_key=key-pw&token=tok-pw';
const SECRETS = ['userinfo-pw', 'ssl-pw', 'query-pw', 'key-pw', 'tok-pw'];

describe('URL secrets in clear', () => {
  it('redacts userinfo and secret query parameters of a URL and inside free text', () => {
    for (const text of [redactUrl(URL_WITH_SECRETS), redactString(`could not open ${URL_WITH_SECRETS}: refused`)]) {
      for (const s of SECRETS) expect(text).not.toContain(s);
      expect(text).toContain('127.0.0.1:1/mailgate');
    }
  });

  it('keeps them out of the store connection error', async () => {
    const err = (await openStore(URL_WITH_SECRETS).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    for (const s of SECRETS) expect(`${err.message} ${JSON.stringify(err)}`).not.toContain(s);
  });

  it('keeps them off the terminal when the CLI fails (built CLI)', () => {
    const r = spawnSync(process.execPath, ['dist/cli/mailgate.js', 'status', '--store', URL_WITH_SECRETS], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('MAILGATE_ERR_STORE');
    for (const s of SECRETS) expect(r.stdout + r.stderr).not.toContain(s);
  });
});
