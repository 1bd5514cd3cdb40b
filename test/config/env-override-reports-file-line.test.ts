/**
 * A setting overridden by an environment variable (MAILGATE_LISTEN, MAILGATE_LOG_LEVEL, …) or a
 * command-line flag was reported at the line of mailgate.yaml it replaced: the user was sent to a
 * line that was right. The error now names where the value came from.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Json } from '../../src/config/load.js';

const YAML = ['log_level: info', 'server:', '  listen: 127.0.0.1:8080', 'delivery:', '  concurrency: 2', ''].join('\n');

function failure(env: Record<string, string>, overrides: Record<string, Json> = {}, yaml = YAML): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mailgate-env-line-')), 'mailgate.yaml');
  writeFileSync(file, yaml);
  try {
    loadConfig({ file, env, overrides });
  } catch (err) {
    expect((err as { code?: string }).code).toBe('MAILGATE_ERR_CONFIG_INVALID');
    return (err as Error).message;
  }
  throw new Error('loaded');
}

describe('a setting overridden by the environment or a flag', () => {
  it('names the variable, not the line of the file it replaced', () => {
    const text = failure({ MAILGATE_LISTEN: 'nowhere', MAILGATE_LOG_LEVEL: 'loud' });
    expect(text).toMatch(/^server\.listen: must be host:port, e\.g\. 127\.0\.0\.1:8080 \(from MAILGATE_LISTEN\)$/m);
    expect(text).toMatch(/^log_level: .* \(from MAILGATE_LOG_LEVEL\)$/m);
    expect(text).not.toMatch(/line 1,|line 3,/);
  });

  it('names the command line for a flag, over the variable and the file', () => {
    const text = failure({ MAILGATE_LISTEN: '127.0.0.1:9090' }, { server: { listen: 'nowhere' }, delivery: { concurrency: 'four' } });
    expect(text).toMatch(/^server\.listen: .* \(from the command line\)$/m);
    expect(text).toMatch(/^delivery\.concurrency: must be a number, not the text "four".* \(from the command line\)$/m);
  });

  it('a route given by flags is not placed at the routes of the file', () => {
    const yaml = ['routes:', '  - name: support', '    source: acme/support', ''].join('\n');
    const text = failure({}, { routes: [{ name: 'import', source: 'no-slash' }] }, yaml);
    expect(text).toMatch(/^routes\[0\]\.source: .*\(from the command line\)$/m);
    expect(text).not.toMatch(/line \d+/);
  });

  it('keeps the line of what the file itself holds, also beside an override', () => {
    const text = failure({ MAILGATE_LISTEN: '127.0.0.1:9090' }, {}, YAML.replace('concurrency: 2', 'concurrency: four'));
    expect(text).toMatch(/^delivery\.concurrency: must be a number, not the text "four".* \(line 5, column 16\)$/m);
  });
});
