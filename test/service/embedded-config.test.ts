/**
 * `mailgate serve` without a file: the embedded defaults take the place of a file, the
 * environment and the flags are set over them setting by setting. Regression: the flags were
 * spread over the embedded defaults section by section (`{ ...embedded, ...flags }`), so a flag in
 * a section the defaults also set (`delivery`, `server`) dropped the defaults' other settings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedConfig } from '../../src/service/defaults.js';
import { configOf, type EmbeddedDefaults } from '../../src/service/run.js';

const cwd = mkdtempSync(join(tmpdir(), 'mailgate-embedded-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** The embedded defaults with a `delivery` and a `server` setting of their own. */
const embedded = (): EmbeddedDefaults => ({
  settings: { ...embeddedConfig(), delivery: { flush_ms: 0 }, server: { listen: '127.0.0.1:0', public_preview: true } } as never,
  cwd,
});

describe('serve without a configuration file', () => {
  it("a flag sets its one setting: the embedded defaults' other settings of that section stay", () => {
    const { config, adminKey } = configOf({ env: {}, drainMs: 5 }, embedded);
    expect(config.delivery).toMatchObject({ drain_ms: 5, flush_ms: 0 });
    // The admin key joins the embedded server section rather than replacing it.
    expect(config.server).toMatchObject({ listen: '127.0.0.1:0', public_preview: true, api_keys: [adminKey!.key] });
    expect(adminKey!.path).toBe(join(cwd, 'data', 'admin-key'));
  });

  it('the environment is set over the embedded defaults, the flags over both', () => {
    const { config } = configOf({ env: { MAILGATE_LISTEN: '127.0.0.1:8099' }, drainMs: 7 }, embedded);
    expect(config.server.listen).toBe('127.0.0.1:8099');
    expect(config.delivery.drain_ms).toBe(7);
    expect(config.routes.map((r) => r.name)).toEqual(['samples']);
  });
});
