/** The sample configurations load and validate: what a user copies must start. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseImapAccount } from '../../adapters/imap/index.js';
import { loadConfig } from '../../src/config/load.js';
import { embeddedConfig, packageRoot, samplePaths } from '../../src/service/defaults.js';
import { parseListen } from '../../src/server/listen.js';
import { ROOT } from './serve-process.js';

describe('sample configurations', () => {
  it('samples/mailgate.yaml is the embedded defaults as a file', () => {
    const c = loadConfig({ file: join(ROOT, 'samples/mailgate.yaml'), env: {} });
    expect(c.api.url).toBeUndefined();
    expect(c.routes.map((r) => [r.name, r.source])).toEqual([['samples', 'mailgate/samples']]);
    const embedded = loadConfig({ overrides: embeddedConfig() as never });
    expect(embedded.routes).toEqual(c.routes);
    expect(embedded.store).toBe(c.store);
  });

  it('samples/mailgate.example.yaml points at a real API and mailbox, secrets from the environment', () => {
    const env = { MAILGATE_API_TOKEN: 'api-token-1', MAILGATE_ADMIN_KEY: 'admin-key-0123456789', IMAP_PASSWORD: 'imap-pass-1' };
    const c = loadConfig({ file: join(ROOT, 'samples/mailgate.example.yaml'), env });
    expect(c.api).toMatchObject({ url: 'https://acme.reinfer.io', token: 'api-token-1' });
    expect(c.server.api_keys).toEqual(['admin-key-0123456789']);
    const account = parseImapAccount(c.adapters.imap[0]);
    expect(account).toMatchObject({
      name: 'support-inbox',
      route: 'support',
      auth: { user: 'support@example.com', pass: 'imap-pass-1' },
      after_delivery: 'none',
    });
    expect(() => loadConfig({ file: join(ROOT, 'samples/mailgate.example.yaml'), env: {} })).toThrow(/MAILGATE_API_TOKEN/);
  });

  it('samples resolve from the package, not from the working directory', () => {
    expect(packageRoot()).toBe(ROOT);
    expect(samplePaths()).toEqual([join(ROOT, 'samples/files'), join(ROOT, 'samples/mime')]);
  });

  it('server.listen parses host:port and bracketed IPv6', () => {
    expect(parseListen('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseListen('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(() => parseListen('localhost:99999')).toThrow(/MAILGATE_ERR_CONFIG_INVALID|host:port/);
  });
});
