import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { loadConfig } from '../../src/config/load.js';

function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-config-'));
  const path = join(dir, 'mailgate.yaml');
  writeFileSync(path, text);
  return path;
}

function failure(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (isGatewayError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected a GatewayError');
}

const route = `routes:\n  - name: support\n    source: acme/support-emails\n`;

describe('loadConfig', () => {
  it('gives the embedded defaults with no file at all', () => {
    const c = loadConfig();
    expect(c.store).toBe('sqlite:./data/mailgate.db');
    expect(c.server.listen).toBe('127.0.0.1:8080');
    expect(c.api.timeout_ms).toBe(240_000);
    expect(c.delivery.max_documents).toBe(4096);
    expect(c.routes).toEqual([]);
    expect(Object.isFrozen(c.api)).toBe(true);
  });

  it('applies defaults < file < env < flags', () => {
    const path = file(`store: sqlite:/from/file.db\napi: { url: https://file.example, token: t1 }\n${route}`);
    const env = { MAILGATE_STORE: 'sqlite:/from/env.db', MAILGATE_API_TOKEN: 't2' };
    const c = loadConfig({ file: path, env, overrides: { api: { token: 't3' } } });
    expect(c.store).toBe('sqlite:/from/env.db');
    expect(c.api.url).toBe('https://file.example');
    expect(c.api.token).toBe('t3');
    expect(c.routes[0]).toMatchObject({
      name: 'support',
      mode: 'sync',
      transform_tag: 'generic.0.CONVKER5',
      on_property_conflict: 'reject',
    });
  });

  it('interpolates ${VAR}, ${VAR:-default} and $$', () => {
    const path = file(`api: { token: "\${TOKEN}", url: "\${URL:-https://d.example}" }\nserver: { api_keys: ["$$\${KEY}"] }\n`);
    const c = loadConfig({ file: path, env: { TOKEN: 'secret', KEY: 'k'.repeat(20) } });
    expect(c.api.token).toBe('secret');
    expect(c.api.url).toBe('https://d.example');
    expect(c.server.api_keys).toEqual(['$' + 'k'.repeat(20)]);
  });

  it('accepts unquoted placeholders inside flow mappings, as in `api: { token: ${MAILGATE_API_TOKEN} }`', () => {
    const path = file(
      `api: { url: https://api.example, token: \${MAILGATE_API_TOKEN} }\nserver: { listen: 127.0.0.1:8080, api_keys: [\${KEY}] }\n`,
    );
    const c = loadConfig({ file: path, env: { MAILGATE_API_TOKEN: 'tok,{}: "x"', KEY: 'k7'.repeat(10) } });
    expect(c.api.token).toBe('tok,{}: "x"');
    expect(c.server.api_keys).toEqual(['k7'.repeat(10)]);
  });

  it('names the missing environment variable and its path', () => {
    const e = failure(() => loadConfig({ file: file('api: { token: "${NOPE}" }\n'), env: {} }));
    expect(e.code).toBe('MAILGATE_ERR_CONFIG_ENV_MISSING');
    expect(e.message).toContain('api.token');
    expect(e.message).toContain('NOPE');
  });

  it('names every missing environment variable in one error, each with its path (missing-variables-one-per-run regression)', () => {
    const yaml = 'api: { url: "${API_URL}", token: "${API_TOKEN}" }\nserver: { api_keys: ["${ADMIN_KEY}"] }\n';
    const e = failure(() => loadConfig({ file: file(yaml), env: { API_URL: 'https://api.example' } }));
    expect(e.code).toBe('MAILGATE_ERR_CONFIG_ENV_MISSING');
    expect(e.message).toContain('2 environment variables are not set');
    expect(e.message).toContain('api.token: environment variable API_TOKEN is not set');
    expect(e.message).toContain('server.api_keys[0]: environment variable ADMIN_KEY is not set');
    expect(e.message).not.toContain('API_URL');
  });

  it('refuses unknown keys, naming the path', () => {
    const e = failure(() => loadConfig({ file: file(`${route}    sorce: typo\n`) }));
    expect(e.code).toBe('MAILGATE_ERR_CONFIG_INVALID');
    expect(e.message).toMatch(/routes\[0\]/);
    expect(e.message).toMatch(/sorce/);
  });

  it('explains route mistakes: missing source, predict size, unknown adapter route, duplicates', () => {
    expect(failure(() => loadConfig({ file: file('routes:\n  - name: a\n') })).message).toMatch(/routes\[0\]\.source: a sync route needs/);
    expect(
      failure(() => loadConfig({ file: file('routes:\n  - { name: p, mode: predict, dataset: acme/d, max_documents: 5000 }\n') })).message,
    ).toMatch(/at most 4096/);
    expect(
      failure(() => loadConfig({ file: file(`${route}adapters:\n  files:\n    - { name: f, route: nope, paths: [x] }\n`) })).message,
    ).toMatch(/adapters\.files\[0\]\.route/);
    expect(failure(() => loadConfig({ file: file(`${route}  - name: support\n    source: acme/x\n`) })).message).toMatch(/defined twice/);
  });

  it('keeps 0 as 0 and refuses negative numbers', () => {
    const c = loadConfig({ file: file('delivery: { flush_ms: 0 }\n') });
    expect(c.delivery.flush_ms).toBe(0);
    expect(failure(() => loadConfig({ file: file('delivery: { flush_ms: -1 }\n') })).message).toMatch(/delivery\.flush_ms/);
  });

  it('reads server.public_preview and delivery.drain_ms, with defaults false and 30000, 0 kept as 0', () => {
    const d = loadConfig();
    expect(d.server.public_preview).toBe(false);
    expect(d.delivery.drain_ms).toBe(30_000);
    const c = loadConfig({ file: file('server: { public_preview: true }\ndelivery: { drain_ms: 0 }\n') });
    expect(c.server.public_preview).toBe(true);
    expect(c.delivery.drain_ms).toBe(0);
    expect(failure(() => loadConfig({ file: file('delivery: { drain_ms: -1 }\n') })).message).toMatch(/delivery\.drain_ms/);
    expect(failure(() => loadConfig({ file: file('delivery: { drain_ms: 3600001 }\n') })).message).toMatch(/delivery\.drain_ms/);
    expect(failure(() => loadConfig({ file: file('server: { public_preview: "yes" }\n') })).message).toMatch(/server\.public_preview/);
  });

  it('reports unreadable files and YAML errors with the file name', () => {
    expect(failure(() => loadConfig({ file: '/nonexistent/mailgate.yaml' })).message).toMatch(/cannot read/);
    expect(failure(() => loadConfig({ file: file('routes: [\n') })).message).toMatch(/not valid YAML/);
  });
});
