import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';

describe('the README configuration example', () => {
  it('loads as written, with the secrets from the environment', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const block = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const path = join(mkdtempSync(join(tmpdir(), 'mailgate-readme-')), 'mailgate.yaml');
    writeFileSync(path, block!);
    const env = { MAILGATE_API_TOKEN: 'token-1', MAILGATE_ADMIN_KEY: 'f3a9c1d07b2e4a68c5d1', IMAP_PASSWORD: 'pw' };
    const c = loadConfig({ file: path, env });
    expect(c.api).toMatchObject({ url: 'https://acme.reinfer.io', token: 'token-1' });
    expect(c.server.api_keys).toEqual(['f3a9c1d07b2e4a68c5d1']);
    expect(c.routes[0]).toMatchObject({ name: 'support', source: 'acme/support-emails' });
    expect(c.adapters.imap[0]).toMatchObject({ route: 'support', auth: { user: 'support@example.com', pass: 'pw' } });
  });
});
