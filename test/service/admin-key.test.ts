/** The embedded defaults' admin key: generated once, kept under ./data, the same on every start. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { embeddedAdminKey } from '../../src/service/admin-key.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-admin-key-'));
  dirs.push(dir);
  return dir;
}

describe('the admin key of the embedded defaults', () => {
  it('is generated on the first start into data/admin-key (0600), then read back unchanged (regression: a new key every npm start)', () => {
    const cwd = scratch();
    const first = embeddedAdminKey(cwd);
    expect(first.created).toBe(true);
    expect(first.path).toBe(join(cwd, 'data', 'admin-key'));
    expect(first.key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(readFileSync(first.path, 'utf8')).toBe(`${first.key}\n`);
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    const second = embeddedAdminKey(cwd);
    expect(second).toEqual({ ...first, created: false });
    expect(readdirSync(join(cwd, 'data'))).toEqual(['admin-key']); // no temporary file left behind
  });

  it('uses a key written into the file, and refuses a file that holds no usable key with the way out', () => {
    const cwd = scratch();
    mkdirSync(join(cwd, 'data'));
    writeFileSync(join(cwd, 'data', 'admin-key'), '  my-own-admin-key-0123456789\n');
    expect(embeddedAdminKey(cwd)).toMatchObject({ key: 'my-own-admin-key-0123456789', created: false });
    writeFileSync(join(cwd, 'data', 'admin-key'), 'short\n');
    let error: unknown;
    try {
      embeddedAdminKey(cwd);
    } catch (err) {
      error = err;
    }
    expect(isGatewayError(error, 'MAILGATE_ERR_CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toContain('delete it and a new key is generated on the next start');
  });
});
