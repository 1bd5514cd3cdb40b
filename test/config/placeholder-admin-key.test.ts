/**
 * Placeholder admin key: samples/mailgate.yaml fell back to a publicly known admin key when
 * MAILGATE_ADMIN_KEY was unset, and the loader took any 16 characters. Known placeholders
 * are refused with MAILGATE_ERR_CONFIG_INVALID naming the field; the sample has no fallback.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { isPlaceholderKey } from '../../src/config/placeholder-keys.js';
import { isGatewayError } from '../../src/errors.js';
import { embeddedConfig } from '../../src/service/defaults.js';

const SAMPLE = new URL('../../samples/mailgate.yaml', import.meta.url);
const PLACEHOLDERS = [
  'change-me-to-a-long-random-key',
  'changemechangeme',
  'CHANGE_ME_PLEASE_NOW',
  'replace-me-with-a-secret',
  'your-admin-api-key',
  'your_key_goes_here_ok',
  'xxxxxxxxxxxxxxxxxxxx',
  'aaaaaaaaaaaaaaaa',
  '0000000000000000',
  '<your admin key here>',
  'placeholder-admin-key',
];

describe('placeholder admin keys', () => {
  it('the sample configuration has no fallback key', () => {
    const text = readFileSync(SAMPLE, 'utf8');
    expect(text).not.toMatch(/change-me/);
    expect(text).not.toMatch(/MAILGATE_ADMIN_KEY:-/);
    expect(loadConfig({ file: SAMPLE.pathname, env: {} }).server.api_keys).toEqual([]);
  });

  it.each(PLACEHOLDERS)('refuses %s with MAILGATE_ERR_CONFIG_INVALID naming server.api_keys', (key) => {
    expect(isPlaceholderKey(key)).toBe(true);
    const path = join(mkdtempSync(join(tmpdir(), 'mailgate-key-')), 'mailgate.yaml');
    writeFileSync(path, 'server: { api_keys: ["${KEY}"] }\n');
    let err: unknown;
    try {
      loadConfig({ file: path, env: { KEY: key } });
    } catch (e) {
      err = e;
    }
    expect(isGatewayError(err, 'MAILGATE_ERR_CONFIG_INVALID')).toBe(true);
    expect((err as Error).message).toMatch(/server\.api_keys\[0\]: .*placeholder/);
    expect((err as Error).message).not.toContain(key);
  });

  it('accepts generated keys, and the embedded defaults still load', () => {
    for (const key of ['f3a9c1d07b2e4a68c5d1e2f3', 'admin-key-0123456789abcdef', 'Qm9vbXNoYWthbGFrYQ-_x1'])
      expect(isPlaceholderKey(key)).toBe(false);
    expect(() => loadConfig({ overrides: embeddedConfig() as never })).not.toThrow();
  });
});
