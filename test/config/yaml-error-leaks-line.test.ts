/**
 * Leak: a YAML syntax error in the configuration printed the offending line, which may hold a
 * literal secret. The error names the file, line, column and kind only.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { isGatewayError } from '../../src/errors.js';

function failure(yaml: string): Error {
  const path = join(mkdtempSync(join(tmpdir(), 'mailgate-yaml-')), 'mailgate.yaml');
  writeFileSync(path, yaml);
  try {
    loadConfig({ file: path, env: {} });
  } catch (err) {
    expect(isGatewayError(err, 'MAILGATE_ERR_CONFIG_INVALID')).toBe(true);
    expect((err as Error).cause).toBeUndefined();
    return err as Error;
  }
  throw new Error('loaded');
}

describe('a YAML syntax error in the configuration', () => {
  it('gives line, column and kind, not the text of the line', () => {
    const err = failure('api:\n  url: https://api.example\n  token: { hunter2-SECRET: }x\n');
    expect(err.message).not.toContain('hunter2-SECRET');
    expect(err.message).toMatch(/is not valid YAML: line 3, column \d+: [^\n]+ \([A-Z_]+\)$/);
  });

  it('an unclosed quote around a secret', () => {
    const err = failure('api:\n  token: "s3cr3t-SECRET\nstore: sqlite:x.db\n');
    expect(err.message).not.toContain('s3cr3t-SECRET');
    expect(err.message).not.toContain('sqlite:x.db');
    expect(err.message).toMatch(/line \d+, column \d+: a missing character: [^\n]+ \(MISSING_CHAR\)/);
  });

  it('a tab indent next to a password', () => {
    const err = failure('adapters:\n\t- pass: tab-SECRET\n');
    expect(err.message).not.toContain('tab-SECRET');
    expect(err.message).toMatch(/line 2, column 1/);
  });
});
