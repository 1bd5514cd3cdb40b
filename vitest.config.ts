import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores here and in CI: run test files two at a time.
    maxWorkers: 2,
    globalSetup: ['./test/support/global-postgres.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
