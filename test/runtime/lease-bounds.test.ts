/**
 * The claim lease has one rule, CLAIM_LEASE_BOUNDS, wherever it is set: `serve --lease-ms` and
 * `import --lease-ms` (test/cli/flag-usage-errors.test.ts) and the runtime's `leaseMs`, which a
 * program embedding mailgate sets. Out of bounds, the runtime refuses to start, before it opens
 * the store or starts parse workers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { GatewayError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { CLAIM_LEASE_BOUNDS } from '../../src/limits.js';
import { createRuntime } from '../../src/runtime/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mailgate-lease-bounds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = loadConfig({
  overrides: {
    store: `sqlite:${join(dir, 'mg.db')}`,
    api: { url: 'http://127.0.0.1:9', token: 'unused-in-a-dry-run' },
    routes: [{ name: 'support', source: 'acme/support' }],
  } as never,
});

describe('runtime leaseMs', () => {
  const { min, max } = CLAIM_LEASE_BOUNDS;
  it.each([min - 1, max + 1, 0, 1.5])('refuses %s with a coded error naming the range the CLI flags take', async (leaseMs) => {
    const started = createRuntime({ config, logger: createLogger(false), dryRun: true, leaseMs });
    await expect(started).rejects.toBeInstanceOf(GatewayError);
    await expect(started).rejects.toMatchObject({
      code: 'MAILGATE_ERR_CONFIG_INVALID',
      message: `leaseMs must be an integer ${min}..${max}, got ${leaseMs}`,
    });
  });
});
